/// A run's verdict: every threshold with its value and pass/fail, the trend findings, and the run's
/// own outcome (did it run at all, and as planned).
///
/// `passed` is false when any threshold failed; `outcome.failed` is true when the run did not
/// work (no session logged in, server unreachable at start) whatever the thresholds say.
public struct Verdict: Sendable, Equatable, Codable {
    public var thresholds: [ThresholdResult]
    public var findings: [TrendFinding]
    public var outcome: RunOutcome
    /// Why trends were not judged (the run was too short after the warm-up and ramp); nil when they were.
    public var trendsNote: String?
    /// Who limited the run, with its evidence (`ServerSide.attribution`); nil when not judged.
    public var limit: LimitAttribution?

    public init(
        thresholds: [ThresholdResult], findings: [TrendFinding], outcome: RunOutcome, trendsNote: String? = nil, limit: LimitAttribution? = nil
    ) {
        self.thresholds = thresholds
        self.findings = findings
        self.outcome = outcome
        self.trendsNote = trendsNote
        self.limit = limit
    }

    /// True when no threshold failed (a threshold without data does not fail).
    public var thresholdsPassed: Bool { !thresholds.contains { $0.status == .fail } }
}

/// One threshold's result. `value` is in `unit` (nil when nothing was measured: no samples, no target).
public struct ThresholdResult: Sendable, Equatable, Codable {
    /// Pass, fail, or nothing to judge (no samples after the warm-up; such a rule does not fail).
    public enum Status: String, Sendable, Codable {
        case pass, fail
        case noData = "no-data"
    }

    /// The worst window of an `over` rule.
    public struct Window: Sendable, Equatable, Codable {
        /// Seconds since the run's start.
        public var start: Double
        public var end: Double
        public var value: Double
    }

    public var threshold: String
    public var status: Status
    /// The whole run's value (after the warm-up), or for `over` rules the worst window's.
    public var value: Double?
    public var unit: VerdictUnit
    /// `over` rules: the worst window and how many windows were judged.
    public var worstWindow: Window?
    public var windows: Int?
    /// Why there is no value, or how it was measured when that is not obvious.
    public var note: String?

    enum CodingKeys: String, CodingKey {
        case threshold, status, value, unit
        case worstWindow = "worst_window"
        case windows, note
    }

    /// `login.p99 < 800ms   812 ms   FAIL (worst 10m window 1200–1800 s)`.
    public var line: String {
        let valueText = value.map { unit.format($0) } ?? "–"
        let windowText = worstWindow.map { " (worst of \(windows ?? 0) windows: \(Int($0.start))–\(Int($0.end)) s)" } ?? ""
        return "\(status.rawValue.uppercased())  \(threshold): \(valueText)\(windowText)" + (note.map { " — \($0)" } ?? "")
    }
}
