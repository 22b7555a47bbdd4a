/// What counts as a change, per metric: `--tolerance p99=5% --tolerance login.p50=10%,2ms`.
///
/// A tolerance is a size of change: relative % for latency and throughput metrics, percentage points
/// for rates (`error_rate`, `loss`, `muc.fanout`). Latency metrics also have an absolute floor in
/// milliseconds: a change must exceed max(relative tolerance × baseline, floor) — a sub-millisecond
/// figure that doubles has not changed in any way a user feels. A metric regressed only when the
/// whole 95 % interval of its change lies beyond the tolerance on the worse side. Lookup order, for
/// the relative tolerance and the floor separately: the exact key (`login.sasl.p99`), then the step
/// (`login.sasl`: all its percentiles), then the statistic (`p99`, `throughput`), then the default.
public struct Tolerances: Sendable, Equatable {
    /// Key → relative tolerance (% or pp).
    public private(set) var overrides: [String: Double]
    /// Key → absolute floor of a latency change, milliseconds.
    public private(set) var floorOverrides: [String: Double]

    /// The defaults: latency p50 and p90 10 %, p99 20 %; throughput 5 %; error rate 1 pp; loss
    /// 0.1 pp; MUC fan-out completeness 1 pp; a monitored server's costs (`server.…`) 10 %. Tails are noisier than medians, hence the wider p99.
    public static let defaults: [String: Double] = [
        "p50": 10, "p90": 10, "p99": 20, "throughput": 5, "error_rate": 1, "loss": 0.1, "muc.fanout": 1, "server": 10,
    ]

    /// The default floors of latency changes, milliseconds: p50 1 ms, p90 2 ms, p99 5 ms. On a
    /// shared machine the scheduler alone moves a figure by about a time slice (Linux CFS hands out
    /// slices of a few ms to runnable threads): a median by under a millisecond, a tail, made of the
    /// unluckiest few recordings, by several. A quiet server's `login.connect.p50` is ~0.2 ms, so a
    /// relative tolerance alone calls its doubling a regression.
    public static let defaultFloors: [String: Double] = ["p50": 1, "p90": 2, "p99": 5]

    public init(_ overrides: [String: Double] = [:], floors: [String: Double] = [:]) {
        self.overrides = overrides
        self.floorOverrides = floors
    }

    /// Parses `KEY=VALUE` arguments, VALUE being `N[%|pp]` (relative), `Nms` (a latency floor) or
    /// both, comma-separated (`login.p50=10%,2ms`); every problem is reported at once.
    public static func parse(_ arguments: [String]) throws(ToleranceError) -> Tolerances {
        var overrides: [String: Double] = [:]
        var floors: [String: Double] = [:]
        var problems: [String] = []
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                problems.append("--tolerance \(argument): expected KEY=VALUE, e.g. p99=5% or login.p50=10%,2ms")
                continue
            }
            let key = String(parts[0]).trimmingSpaces
            let known = isKnownKey(key)
            if !known {
                problems.append(
                    "--tolerance \(argument): unknown metric '\(key)' (use p50, p90, p99, STEP.p50|p90|p99, STEP, throughput, throughput.logins, throughput.messages, error_rate, loss, muc.fanout)"
                )
            }
            for piece in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
                let text = String(piece).trimmingSpaces
                let isFloor = text.hasSuffix("ms")
                // A floor in milliseconds, else a relative tolerance: `5%`, `1pp` or a bare 5 (percent).
                let number = isFloor ? Double(String(text.dropLast(2)).trimmingSpaces) : PercentText.parse(text, points: true)?.percent
                guard let value = number, value.isFinite, value >= 0 else {
                    problems.append("--tolerance \(argument): '\(piece)' is not a non-negative number (e.g. 5%, 2ms)")
                    continue
                }
                if isFloor {
                    if known && !isLatencyKey(key) {
                        problems.append("--tolerance \(argument): a floor in ms applies to latency only, not '\(key)'")
                        continue
                    }
                    floors[key] = value
                } else {
                    overrides[key] = value
                }
            }
        }
        guard problems.isEmpty else { throw ToleranceError(problems: problems) }
        return Tolerances(overrides, floors: floors)
    }

    static func lookupKeys(_ metric: CompareMetric) -> [String] {
        var keys = [metric.key]
        if let step = metric.step { keys.append(step) }
        if let name = metric.statisticName { keys.append(name) }
        if metric.kind == .throughput { keys.append("throughput") }
        if metric.kind == .cost { keys.append("server") }
        return keys
    }

    /// The relative tolerance of a metric (% or pp).
    public func tolerance(for metric: CompareMetric) -> Double {
        let keys = Self.lookupKeys(metric)
        for key in keys {
            if let value = overrides[key] { return value }
        }
        for key in keys {
            if let value = Self.defaults[key] { return value }
        }
        return 10
    }

    /// The absolute floor of a latency metric's change, ms (nil for other metrics).
    public func floor(for metric: CompareMetric) -> Double? {
        guard metric.kind == .latency else { return nil }
        let keys = Self.lookupKeys(metric)
        for key in keys {
            if let value = floorOverrides[key] { return value }
        }
        for key in keys {
            if let value = Self.defaultFloors[key] { return value }
        }
        return nil
    }

    /// The tolerance a metric is judged with, in % or pp: the relative tolerance, widened for latency
    /// to the floor expressed relative to the baseline (`floor / baseline × 100`) when that is larger.
    public func effectiveTolerance(for metric: CompareMetric, baseline: Double?) -> Double {
        let relative = tolerance(for: metric)
        // A baseline of 0 ms has no relative change (it is reported as 0 %).
        guard let floor = floor(for: metric), floor > 0, let baseline, baseline > 0 else { return relative }
        return max(relative, floor / baseline * 100)
    }

    /// Keys that name latency (every key but the scalar metrics and `throughput`).
    static func isLatencyKey(_ key: String) -> Bool {
        key != "throughput" && key != "server" && !key.hasPrefix("server.") && !CompareMetric.scalars.contains { $0.key == key }
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
