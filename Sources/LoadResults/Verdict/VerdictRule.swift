import Foundation

/// A threshold as the evaluator sees it: what to measure, the comparison, the bound in the
/// measure's canonical unit, an optional window, and whether it judges a trend.
///
/// The profile's `Threshold` (LoadProfile, which this module does not import) is turned into this by
/// the command line. Units: milliseconds, fractions (0.001 = 0.1 %), counts, bytes, per second, or a
/// fraction per hour for trends.
public struct VerdictRule: Sendable, Equatable {
    public var measure: VerdictMeasure
    public var comparison: VerdictComparison
    public var bound: Double
    public var unit: VerdictUnit
    /// Seconds; nil: judged over the whole run after the warm-up.
    public var window: Double?
    public var isTrend: Bool
    /// The rule as written.
    public var text: String

    public init(
        measure: VerdictMeasure, comparison: VerdictComparison, bound: Double, unit: VerdictUnit,
        window: Double? = nil, isTrend: Bool = false, text: String
    ) {
        self.measure = measure
        self.comparison = comparison
        self.bound = bound
        self.unit = unit
        self.window = window
        self.isTrend = isTrend
        self.text = text
    }

    /// True when `value` passes.
    public func passes(_ value: Double) -> Bool { comparison.holds(value, bound) }
}

/// What a verdict rule or trend measures (see `ThresholdQuantity` for the written names).
public enum VerdictMeasure: Sendable, Hashable, CustomStringConvertible {
    /// A percentile (0–100; 100 is the maximum) of a latency metric, in milliseconds.
    case latencyPercentile(metric: String, percentile: Double, label: String)
    /// Samples of a latency metric.
    case latencyCount(metric: String)
    /// Samples per second of a latency metric.
    case latencyRate(metric: String)
    /// Errors ÷ (sessions started + steps completed).
    case errorsRate
    case errorsCount
    case messagesLost
    /// Lost ÷ sent.
    case messagesLoss
    /// The lowest `sessions_online` of the intervals judged.
    case sessionsOnline
    case sessionsFailed
    /// The highest resident memory, bytes.
    case generatorRSS
    /// The highest CPU, as a fraction of one core (1 = 100 %).
    case generatorCPU
    case droppedArrivals

    public var description: String {
        switch self {
        case .latencyPercentile(let metric, _, let label): return "\(metric).\(label)"
        case .latencyCount(let metric): return "\(metric).count"
        case .latencyRate(let metric): return "\(metric).rate"
        case .errorsRate: return "errors.rate"
        case .errorsCount: return "errors.count"
        case .messagesLost: return "messages.lost"
        case .messagesLoss: return "messages.loss"
        case .sessionsOnline: return "sessions.online"
        case .sessionsFailed: return "sessions.failed"
        case .generatorRSS: return "generator.rss"
        case .generatorCPU: return "generator.cpu"
        case .droppedArrivals: return "dropped_arrivals"
        }
    }
}

/// A rule's comparison; raw values are the operators as written.
public enum VerdictComparison: String, Sendable, CaseIterable {
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case equal = "=="
    case notEqual = "!="

    public func holds(_ value: Double, _ bound: Double) -> Bool {
        switch self {
        case .less: return value < bound
        case .lessOrEqual: return value <= bound
        case .greater: return value > bound
        case .greaterOrEqual: return value >= bound
        case .equal: return value == bound
        case .notEqual: return value != bound
        }
    }

    /// The worse of two values for this comparison (the one further from passing): the larger for
    /// `<`/`<=`, the smaller for `>`/`>=`; for `==`/`!=` the first that fails.
    func worse(_ a: Double, _ b: Double, bound: Double) -> Double {
        switch self {
        case .less, .lessOrEqual: return max(a, b)
        case .greater, .greaterOrEqual: return min(a, b)
        case .equal, .notEqual: return holds(a, bound) ? b : a
        }
    }
}

/// The canonical unit of a rule's bound and value; raw values are what results files show.
public enum VerdictUnit: String, Sendable, Codable, CaseIterable {
    case milliseconds = "ms"
    case count, fraction
    case perSecond = "per_s"
    case bytes
    case fractionPerHour = "fraction_per_h"

    /// `812 ms`, `0.05 %`, `3`, `512.0 MB`, `12.3/s`, `3.1 %/h`.
    public func format(_ value: Double) -> String {
        switch self {
        case .milliseconds: return (value < 0 ? "-" : "") + TextReport.formatMs(abs(value)) + " ms"
        case .count: return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.2f", value)
        case .fraction: return Self.significant(value * 100) + " %"
        case .perSecond: return String(format: "%.2f/s", value)
        case .bytes: return (value < 0 ? "-" : "") + TextReport.formatBytes(UInt64(min(abs(value), 1e18)))
        case .fractionPerHour: return (value > 0 ? "+" : "") + Self.significant(value * 100) + " %/h"
        }
    }

    /// Three significant digits without exponents: `0.0123`, `1.23`, `12.3`, `20700`.
    static func significant(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude == 0 { return "0" }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3g", value)
    }
}
