import Foundation

/// `xmppload compare`'s result: baseline vs candidate per step and key metric, with the change, its
/// 95 % interval and a verdict, plus why the runs may not be comparable. Encodes as `--json` prints it.
///
/// Built by `Comparison.make` from plain values (no I/O), so it is tested with synthetic runs.
/// Method: with one run per side, a bootstrap over each run's intervals; with at least two runs on
/// both sides, a bootstrap over the runs (between-run variation is then part of the interval).
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

        /// The label(s), else the directories, for headings.
        public var name: String { (labels.isEmpty ? directories : labels).joined(separator: ", ") }
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
        enum CodingKeys: String, CodingKey {
            case metric, baseline, candidate, change
            case low = "ci_low"
            case high = "ci_high"
            case tolerance, verdict
            case ofRecordings = "resampled_recordings"
        }
    }

    public enum Method: String, Codable, Sendable {
        case intervals = "bootstrap over intervals"
        case runs = "bootstrap over runs"
    }

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
    public var rows: [Row]

    enum CodingKeys: String, CodingKey {
        case baseline, candidate, method, resamples, seed
        case confidencePercent = "confidence_percent"
        case problems, forced, rows
        case regressed, outcome
    }

    public var regressed: [String] { rows.filter { $0.verdict == .regressed }.map(\.metric.key) }

    /// The overall outcome; `xmppload compare` exits 4, 3 or 0 for them.
    public enum Outcome: String, Codable, Sendable {
        /// The runs are not comparable and `--force` was not given: no verdict.
        case notComparable = "not comparable"
        /// At least one metric regressed.
        case regressed
        case noRegression = "no regression"
    }

    public var outcome: Outcome {
        if !problems.isEmpty && !forced { return .notComparable }
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
    public static func make(
        baseline: [MeasuredRun], candidate: [MeasuredRun], tolerances: Tolerances = Tolerances(),
        bootstrap: Bootstrap = Bootstrap(), force: Bool = false
    ) -> Comparison {
        let problems = Comparability.reasons(baseline: baseline, candidate: candidate)
        let method: Method = baseline.count >= 2 && candidate.count >= 2 ? .runs : .intervals
        func units(_ runs: [MeasuredRun]) -> [MeasuredUnit] {
            method == .runs ? runs.map(\.total) : runs.flatMap(\.intervals)
        }
        let baseUnits = units(baseline)
        let candUnits = units(candidate)
        var comparison = Comparison(
            baseline: Side(baseline, units: baseUnits.count), candidate: Side(candidate, units: candUnits.count),
            method: method, resamples: bootstrap.resamples, seed: bootstrap.seed,
            problems: problems, forced: force, rows: [])
        guard problems.isEmpty || force else { return comparison }
        comparison.rows = rows(baseline: baseUnits, candidate: candUnits, tolerances: tolerances, bootstrap: bootstrap)
        return comparison
    }

    /// Every metric measured on either side: each step's p50/p90/p99 (login, its phases, then the
    /// other steps), then throughput, error rate, loss and MUC fan-out where they apply.
    static func rows(baseline: [MeasuredUnit], candidate: [MeasuredUnit], tolerances: Tolerances, bootstrap: Bootstrap) -> [Row] {
        var rows: [Row] = []
        let steps = Set((baseline + candidate).flatMap { $0.latency.keys })
        for step in TextReport.orderedMetrics(Array(steps)) {
            let metrics = CompareMetric.percentiles.map { CompareMetric.latency(step, $0.name, $0.value) }
            let estimates = bootstrap.latency(
                baseline: baseline.map { $0.latency[step] ?? BucketCounts() },
                candidate: candidate.map { $0.latency[step] ?? BucketCounts() },
                percentiles: metrics.map { $0.percentile! })
            for (index, metric) in metrics.enumerated() {
                rows.append(row(metric, estimates?[index], tolerances: tolerances))
            }
        }
        let baseTotal = baseline.reduce(into: MeasuredUnit()) { $0.add($1) }
        let candTotal = candidate.reduce(into: MeasuredUnit()) { $0.add($1) }
        for metric in CompareMetric.scalars {
            let applies: Bool
            switch metric.key {
            case CompareMetric.loginThroughput.key: applies = baseTotal.sessionsLoggedIn + candTotal.sessionsLoggedIn > 0
            case CompareMetric.messageThroughput.key: applies = baseTotal.messagesReceived + candTotal.messagesReceived > 0
            case CompareMetric.errorRate.key: applies = baseTotal.sessionsStarted + candTotal.sessionsStarted > 0
            case CompareMetric.loss.key: applies = baseTotal.messagesSent + candTotal.messagesSent > 0
            default: applies = baseTotal.fanoutExpected + candTotal.fanoutExpected > 0
            }
            guard applies else { continue }
            let estimate = bootstrap.ratio(
                baseline: baseline.compactMap { $0.fraction(for: metric) },
                candidate: candidate.compactMap { $0.fraction(for: metric) },
                scale: metric.kind == .rate ? 100 : 1, relative: metric.kind != .rate)
            rows.append(row(metric, estimate, tolerances: tolerances))
        }
        return rows
    }

    static func row(_ metric: CompareMetric, _ estimate: Bootstrap.Estimate?, tolerances: Tolerances) -> Row {
        let tolerance = tolerances.tolerance(for: metric)
        guard let estimate else {
            return Row(metric: metric, tolerance: tolerance, verdict: .notMeasured)
        }
        return Row(
            metric: metric, baseline: estimate.baseline, candidate: estimate.candidate, change: estimate.change,
            low: estimate.low, high: estimate.high, tolerance: tolerance,
            verdict: ChangeVerdict.judge(
                low: estimate.low, high: estimate.high, tolerance: tolerance,
                higherIsWorse: metric.higherIsWorse),
            ofRecordings: estimate.ofRecordings)
    }
}
