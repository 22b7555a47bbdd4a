/// Why a run ended: the `stop_reason` of `summary.json` and `manifest.json` (its raw value).
///
/// Only `.completed` and `.duration` mean the load ran as planned; every other case is a run that was
/// cut short, and the CLI maps each to its own exit code.
public enum StopReason: String, Codable, Sendable, CaseIterable {
    /// Every planned arrival was started and every session ended by itself.
    case completed
    /// The load phase's planned duration (the plan's or `--duration`) was reached; sessions then
    /// finished their step and logged out.
    case duration
    /// SIGINT or SIGTERM.
    case interrupted
    /// `--abort-on-fail`: a threshold failed after the warm-up.
    case thresholdsFailed = "thresholds-failed"

    /// True when the load ran as planned (not cut short).
    public var ranAsPlanned: Bool { self == .completed || self == .duration }
}
