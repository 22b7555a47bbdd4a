/// What counts as a change, per metric: `--tolerance p99=5% --tolerance login.p50=10%`.
///
/// A tolerance is a size of change: relative % for latency and throughput metrics, percentage points
/// for rates (`error_rate`, `loss`, `muc.fanout`). A metric regressed only when the whole 95 %
/// interval of its change lies beyond the tolerance on the worse side. Lookup order: the exact key
/// (`login.sasl.p99`), then the step (`login.sasl`: all its percentiles), then the statistic
/// (`p99`, `throughput`), then the default.
public struct Tolerances: Sendable, Equatable {
    /// Key → tolerance (% or pp).
    public private(set) var overrides: [String: Double]

    /// The defaults: latency p50 and p90 10 %, p99 20 %; throughput 5 %; error rate 1 pp; loss
    /// 0.1 pp; MUC fan-out completeness 1 pp. Tails are noisier than medians, hence the wider p99.
    public static let defaults: [String: Double] = [
        "p50": 10, "p90": 10, "p99": 20, "throughput": 5, "error_rate": 1, "loss": 0.1, "muc.fanout": 1,
    ]

    public init(_ overrides: [String: Double] = [:]) { self.overrides = overrides }

    /// Parses `KEY=VALUE[%|pp]` arguments; every problem is reported at once.
    public static func parse(_ arguments: [String]) throws(ToleranceError) -> Tolerances {
        var overrides: [String: Double] = [:]
        var problems: [String] = []
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                problems.append("--tolerance \(argument): expected KEY=VALUE, e.g. p99=5%")
                continue
            }
            let key = String(parts[0]).trimmingSpaces
            var text = String(parts[1]).trimmingSpaces
            if text.hasSuffix("%") { text.removeLast() } else if text.hasSuffix("pp") { text.removeLast(2) }
            text = text.trimmingSpaces
            if !isKnownKey(key) {
                problems.append(
                    "--tolerance \(argument): unknown metric '\(key)' (use p50, p90, p99, STEP.p50|p90|p99, STEP, throughput, throughput.logins, throughput.messages, error_rate, loss, muc.fanout)"
                )
            }
            guard let value = Double(text), value.isFinite, value >= 0 else {
                problems.append("--tolerance \(argument): '\(parts[1])' is not a non-negative number (e.g. 5%)")
                continue
            }
            overrides[key] = value
        }
        guard problems.isEmpty else { throw ToleranceError(problems: problems) }
        return Tolerances(overrides)
    }

    /// The tolerance of a metric (% or pp).
    public func tolerance(for metric: CompareMetric) -> Double {
        var keys = [metric.key]
        if let step = metric.step { keys.append(step) }
        if let name = metric.statisticName { keys.append(name) }
        if metric.kind == .throughput { keys.append("throughput") }
        for key in keys {
            if let value = overrides[key] { return value }
        }
        for key in keys {
            if let value = Self.defaults[key] { return value }
        }
        return 10
    }

    static func isKnownKey(_ key: String) -> Bool {
        if Self.defaults[key] != nil || CompareMetric.scalars.contains(where: { $0.key == key }) { return true }
        guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else { return false }
        guard !key.hasPrefix("."), !key.hasSuffix(".") else { return false }
        // STEP.p50 or a bare step name (login, login.sasl, message, muc.message); a percentile
        // other than p50, p90 and p99 is not compared, so it is a typo.
        let last = key.split(separator: ".").last.map(String.init) ?? key
        if last.count > 1, last.first == "p", last.dropFirst().allSatisfy({ $0.isNumber || $0 == "." }) {
            return CompareMetric.percentiles.contains { $0.name == last }
        }
        return true
    }
}

/// `--tolerance` arguments that could not be read, every one listed.
public struct ToleranceError: Error, Sendable, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
