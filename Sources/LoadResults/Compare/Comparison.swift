import Foundation

/// `xmppload compare`'s (and `xmppload ab`'s) result: baseline vs candidate per step and key metric,
/// with the change, its 95 % interval and a verdict, plus why the runs may not be comparable.
/// Encodes as `--json` prints it.
///
/// Built by `Comparison.make` from plain values (no I/O), so it is tested with synthetic runs.
/// Method: with at least `minimumRuns` runs on both sides, a bootstrap over the runs (run-to-run
/// variation is then part of the interval); with fewer, a bootstrap over each run's intervals, whose
/// rows are shown but not judged (`verdictWithheld` says why: intervals of one run cannot see
/// run-to-run variation); `paired` (rounds of `xmppload ab`), a paired bootstrap over rounds, judged
/// from `minimumRuns` rounds on.
public struct Comparison: Codable, Sendable {
    /// One side (baseline or candidate): its directories and what their manifests say.
    public struct Side: Codable, Sendable, Equatable {
        public var directories: [String]
        public var runIDs: [String]
        public var labels: [String]
        public var tags: [[String: String]]
        public var serverSoftware: [String]
        public var units: Int
        enum CodingKeys: String, CodingKey {
            case directories
            case runIDs = "run_ids"
            case labels, tags
            case serverSoftware = "server_software"
            case units
        }

        init(_ runs: [MeasuredRun], units: Int) {
            directories = runs.map(\.directory)
            runIDs = runs.compactMap { $0.manifest?.runID }
            labels = runs.compactMap { $0.manifest?.label }
            tags = runs.compactMap { $0.manifest?.tags }.filter { !$0.isEmpty }
            serverSoftware = Array(
                Set(
                    runs.compactMap { run in
                        run.manifest.flatMap { $0.serverFacts?.softwareDescription ?? $0.serverSoftware }
                    })
            ).sorted()
            self.units = units
        }

        /// The label(s), else the directories, for headings; each label once (`ab` gives every
        /// round of a side the same one).
        public var name: String {
            guard !labels.isEmpty else { return directories.joined(separator: ", ") }
            var seen = Set<String>()
            return labels.filter { seen.insert($0).inserted }.joined(separator: ", ")
        }
    }

    /// One metric's comparison. Values in the metric's unit; change, interval and tolerance in %
    /// (relative) or pp (rates). Nil values: not measured on that side.
    public struct Row: Codable, Sendable, Equatable {
        public var metric: CompareMetric
        public var baseline: Double?
        public var candidate: Double?
        public var change: Double?
        public var low: Double?
        public var high: Double?
        public var tolerance: Double
        public var verdict: ChangeVerdict
        /// The interval came from resampling single recordings (a side had too few units).
        public var ofRecordings = false
        /// Latency only: the absolute floor of a change, ms. `tolerance` is then the larger of the
        /// relative tolerance and floor / baseline × 100.
        public var floor: Double?
        /// When `verdict` is `notJudged`: what the interval alone shows (improved, regressed, no
        /// significant change) — an indication, not a verdict.
        public var indication: ChangeVerdict?
        enum CodingKeys: String, CodingKey {
            case metric, baseline, candidate, change
            case low = "ci_low"
            case high = "ci_high"
            case tolerance, verdict
            case ofRecordings = "resampled_recordings"
            case floor = "tolerance_floor_ms"
            case indication
        }
    }

    public enum Method: String, Codable, Sendable {
        case intervals = "bootstrap over intervals"
        case runs = "bootstrap over runs"
        case pairedRounds = "paired bootstrap over rounds"

        /// What one resampled unit is, for headings.
        public var unitName: String {
            switch self {
            case .intervals: return "intervals"
            case .runs: return "runs"
            case .pairedRounds: return "rounds"
            }
        }
    }

    /// Runs per side (or rounds, paired) from which a comparison gives verdicts: below it a
    /// bootstrap has too few units to put run-to-run variation in its interval (2 units give at
    /// most 3 distinct resamples).
    public static let minimumRuns = 3

    public var baseline: Side
    public var candidate: Side
    public var method: Method
    public var resamples: Int
    public var seed: UInt64
    public var confidencePercent: Double = 95
    /// Why the runs are not comparable (empty: they are).
    public var problems: [String]
    /// `--force`: the problems were reported as warnings and the metrics judged anyway.
    public var forced: Bool
    /// Why the rows are shown but not judged (too few runs or rounds to see run-to-run variation),
    /// and how to get a verdict; nil when they are judged.
    public var verdictWithheld: String?
    public var rows: [Row]

    enum CodingKeys: String, CodingKey {
        case baseline, candidate, method, resamples, seed
        case confidencePercent = "confidence_percent"
        case problems, forced
        case verdictWithheld = "verdict_withheld"
        case rows
        case regressed, outcome
    }

    public var regressed: [String] { rows.filter { $0.verdict == .regressed }.map(\.metric.key) }

    /// The overall outcome; `xmppload compare` exits 4, 3 or 0 for them.
    public enum Outcome: String, Codable, Sendable {
        /// The runs are not comparable and `--force` was not given: no verdict.
        case notComparable = "not comparable"
        /// Too few runs (or rounds) per side for a verdict: changes and intervals are shown, nothing
        /// is judged. `compare` and `ab` exit 0.
        case insufficientRuns = "insufficient runs"
        /// At least one metric regressed.
        case regressed
        case noRegression = "no regression"
    }

    public var outcome: Outcome {
        if !problems.isEmpty && !forced { return .notComparable }
        if verdictWithheld != nil { return .insufficientRuns }
        return regressed.isEmpty ? .noRegression : .regressed
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        baseline = try container.decode(Side.self, forKey: .baseline)
        candidate = try container.decode(Side.self, forKey: .candidate)
        method = try container.decode(Method.self, forKey: .method)
        resamples = try container.decode(Int.self, forKey: .resamples)
        seed = try container.decode(UInt64.self, forKey: .seed)
        confidencePercent = try container.decode(Double.self, forKey: .confidencePercent)
        problems = try container.decode([String].self, forKey: .problems)
        forced = try container.decode(Bool.self, forKey: .forced)
        verdictWithheld = try container.decodeIfPresent(String.self, forKey: .verdictWithheld)
        rows = try container.decode([Row].self, forKey: .rows)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(method, forKey: .method)
        try container.encode(resamples, forKey: .resamples)
        try container.encode(seed, forKey: .seed)
        try container.encode(confidencePercent, forKey: .confidencePercent)
        try container.encode(problems, forKey: .problems)
        try container.encode(forced, forKey: .forced)
        try container.encodeIfPresent(verdictWithheld, forKey: .verdictWithheld)
        try container.encode(rows, forKey: .rows)
        try container.encode(regressed, forKey: .regressed)
        try container.encode(outcome, forKey: .outcome)
    }

    init(baseline: Side, candidate: Side, method: Method, resamples: Int, seed: UInt64, problems: [String], forced: Bool, rows: [Row]) {
        self.baseline = baseline
        self.candidate = candidate
        self.method = method
        self.resamples = resamples
        self.seed = seed
        self.problems = problems
        self.forced = forced
        self.rows = rows
    }

    /// Compares the runs. Problems of comparability are always listed; unless `force` is set, the
    /// metrics are then not judged (`rows` is empty), since a verdict on incomparable runs misleads.
    ///
    /// `paired`: `baseline[r]` and `candidate[r]` are round r of `xmppload ab` (run back to back);
    /// the per-round changes are bootstrapped over rounds. Otherwise: at least `minimumRuns` runs on
    /// both sides are resampled as runs, for every metric; fewer are resampled by interval and shown
    /// without a verdict.
    public static func make(
        baseline: [MeasuredRun], candidate: [MeasuredRun], tolerances: Tolerances = Tolerances(),
        bootstrap: Bootstrap = Bootstrap(), force: Bool = false, paired: Bool = false
    ) -> Comparison {
        var problems = Comparability.reasons(baseline: baseline, candidate: candidate)
        if paired && baseline.count != candidate.count {
            problems.append(
                "a paired comparison needs one baseline and one candidate run per round: \(baseline.count) baseline vs \(candidate.count) candidate runs"
            )
        }
        let method: Method
        if paired {
            method = .pairedRounds
        } else {
            method = baseline.count >= minimumRuns && candidate.count >= minimumRuns ? .runs : .intervals
        }
        func units(_ runs: [MeasuredRun]) -> [MeasuredUnit] {
            method == .intervals ? runs.flatMap(\.intervals) : runs.map(\.total)
        }
        let baseUnits = units(baseline)
        let candUnits = units(candidate)
        var comparison = Comparison(
            baseline: Side(baseline, units: baseUnits.count), candidate: Side(candidate, units: candUnits.count),
            method: method, resamples: bootstrap.resamples, seed: bootstrap.seed,
            problems: problems, forced: force, rows: [])
        comparison.verdictWithheld = withheldReason(method: method, baselineRuns: baseline.count, candidateRuns: candidate.count)
        guard problems.isEmpty || force else { return comparison }
        var rows: [Row]
        if method == .pairedRounds {
            rows = pairedRows(
                rounds: Array(zip(baseUnits, candUnits)).map { (baseline: $0.0, candidate: $0.1) }, tolerances: tolerances,
                bootstrap: bootstrap)
        } else {
            rows = Self.rows(
                baseline: baseUnits, candidate: candUnits, tolerances: tolerances, bootstrap: bootstrap,
                recordingsWhenFewUnits: method == .intervals, expandForUnits: method == .runs)
        }
        // The monitored servers' costs: one value per run, so always resampled as runs (or rounds).
        rows += ServerCostMetrics.rows(
            baseline: baseline.map { ServerCostMetrics.values($0.outcome?.serverCosts ?? []) },
            candidate: candidate.map { ServerCostMetrics.values($0.outcome?.serverCosts ?? []) }, paired: method == .pairedRounds,
            tolerances: tolerances, bootstrap: bootstrap)
        if comparison.verdictWithheld != nil {
            for index in rows.indices where rows[index].verdict != .notMeasured {
                rows[index].indication = rows[index].verdict
                rows[index].verdict = .notJudged
            }
        }
        comparison.rows = rows
        return comparison
    }

    /// Why a comparison of this shape gives no verdict, with the way to get one; nil when it does.
    static func withheldReason(method: Method, baselineRuns: Int, candidateRuns: Int) -> String? {
        switch method {
        case .runs:
            return nil
        case .pairedRounds:
            let rounds = min(baselineRuns, candidateRuns)
            guard rounds < minimumRuns else { return nil }
            return
                "\(rounds) round\(rounds == 1 ? "" : "s") cannot show how much the difference varies from round to round; give --rounds \(minimumRuns) or more for a verdict"
        case .intervals:
            let shape =
                baselineRuns == 1 && candidateRuns == 1
                ? "one run per side" : "\(baselineRuns) baseline vs \(candidateRuns) candidate runs"
            return
                "\(shape) cannot see run-to-run variation (the intervals resample within runs); for a verdict give at least \(minimumRuns) runs per side (--baseline A1 A2 A3 --candidate B1 B2 B3) or use `xmppload ab` (interleaved rounds)"
        }
    }

    /// The metrics measured on either side, in report order: each step's p50/p90/p99 (login, its
    /// phases, then the other steps), then throughput, error rate, loss and MUC fan-out where they
    /// apply (something counted on either side).
    static func metrics(baseline: [MeasuredUnit], candidate: [MeasuredUnit]) -> (steps: [String], scalars: [CompareMetric]) {
        let steps = TextReport.orderedMetrics(Array(Set((baseline + candidate).flatMap { $0.latency.keys })))
        let total = (baseline + candidate).reduce(into: MeasuredUnit()) { $0.add($1) }
        let scalars = CompareMetric.scalars.filter { metric in
            switch metric.key {
            case CompareMetric.loginThroughput.key: return total.sessionsLoggedIn > 0
            case CompareMetric.messageThroughput.key: return total.messagesReceived > 0
            case CompareMetric.errorRate.key: return total.sessionsStarted > 0
            case CompareMetric.loss.key: return total.messagesSent > 0
            default: return total.fanoutExpected > 0
            }
        }
        return (steps, scalars)
    }

    static func latencyMetrics(_ step: String) -> [CompareMetric] {
        CompareMetric.percentiles.map { CompareMetric.latency(step, $0.name, $0.value) }
    }

    /// Every metric measured on either side, bootstrapped over the units (intervals or runs).
    /// `recordingsWhenFewUnits`: sides with fewer than `Bootstrap.minimumUnits` intervals carrying a
    /// latency metric resample its recordings (intervals only; runs are always resampled as runs).
    /// `expandForUnits`: the units are runs, so the intervals are widened for their number
    /// (`Bootstrap.expanded`, by the smaller side's count).
    static func rows(
        baseline: [MeasuredUnit], candidate: [MeasuredUnit], tolerances: Tolerances, bootstrap: Bootstrap,
        recordingsWhenFewUnits: Bool = true, expandForUnits: Bool = false
    ) -> [Row] {
        func widen(_ estimate: Bootstrap.Estimate?, _ metric: CompareMetric) -> Bootstrap.Estimate? {
            guard expandForUnits, let estimate else { return estimate }
            return Bootstrap.expanded(estimate, units: min(baseline.count, candidate.count), bounds: bounds(metric))
        }
        var rows: [Row] = []
        let (steps, scalars) = metrics(baseline: baseline, candidate: candidate)
        for step in steps {
            let metrics = latencyMetrics(step)
            let estimates = bootstrap.latency(
                baseline: baseline.map { $0.latency[step] ?? BucketCounts() },
                candidate: candidate.map { $0.latency[step] ?? BucketCounts() },
                percentiles: metrics.map { $0.percentile! }, recordingsWhenFewUnits: recordingsWhenFewUnits)
            for (index, metric) in metrics.enumerated() {
                rows.append(row(metric, widen(estimates?[index], metric), tolerances: tolerances))
            }
        }
        for metric in scalars {
            let estimate = bootstrap.ratio(
                baseline: baseline.compactMap { $0.fraction(for: metric) },
                candidate: candidate.compactMap { $0.fraction(for: metric) },
                scale: metric.kind == .rate ? 100 : 1, relative: metric.kind != .rate, proportion: metric.kind == .rate)
            rows.append(row(metric, widen(estimate, metric), tolerances: tolerances))
        }
        return rows
    }

    /// Every metric measured on either side, from rounds of (baseline, candidate) run totals: each
    /// round's value is the percentile of its merged histogram (latency) or its ratio, and the
    /// paired bootstrap resamples rounds (`Bootstrap.paired`), its interval widened for the number
    /// of rounds (`Bootstrap.expanded`).
    static func pairedRows(
        rounds: [(baseline: MeasuredUnit, candidate: MeasuredUnit)], tolerances: Tolerances, bootstrap: Bootstrap
    ) -> [Row] {
        let (steps, scalars) = metrics(baseline: rounds.map(\.baseline), candidate: rounds.map(\.candidate))
        return (steps.flatMap(latencyMetrics) + scalars).map { metric in
            let baseline = rounds.map { $0.baseline.value(of: metric) }
            let candidate = rounds.map { $0.candidate.value(of: metric) }
            let measured = zip(baseline, candidate).filter { $0 != nil && $1 != nil }.count
            let estimate = bootstrap.paired(baseline: baseline, candidate: candidate, relative: metric.kind != .rate).map {
                Bootstrap.expanded($0, units: measured, bounds: bounds(metric))
            }
            return row(metric, estimate, tolerances: tolerances)
        }
    }

    /// The range a metric's change can take: −100 % and up for relative changes, ±100 pp for rates.
    static func bounds(_ metric: CompareMetric) -> ClosedRange<Double> {
        metric.kind == .rate ? -100...100 : -100...Double.greatestFiniteMagnitude
    }

    static func row(_ metric: CompareMetric, _ estimate: Bootstrap.Estimate?, tolerances: Tolerances) -> Row {
        let floor = tolerances.floor(for: metric)
        guard let estimate else {
            return Row(metric: metric, tolerance: tolerances.tolerance(for: metric), verdict: .notMeasured, floor: floor)
        }
        let tolerance = tolerances.effectiveTolerance(for: metric, baseline: estimate.baseline)
        return Row(
            metric: metric, baseline: estimate.baseline, candidate: estimate.candidate, change: estimate.change,
            low: estimate.low, high: estimate.high, tolerance: tolerance,
            verdict: ChangeVerdict.judge(
                low: estimate.low, high: estimate.high, tolerance: tolerance,
                higherIsWorse: metric.higherIsWorse),
            ofRecordings: estimate.ofRecordings, floor: floor)
    }
}
