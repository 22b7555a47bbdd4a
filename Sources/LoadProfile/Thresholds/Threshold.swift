/// One pass/fail rule on a run's measurements, parsed once from `METRIC.STAT OP VALUE [over WINDOW]`
/// or `trend(METRIC.STAT) OP RATE` (see docs/PROFILES.md, "Thresholds").
///
/// Contract: `bound` is in the quantity's canonical unit (`unit`): milliseconds for latencies,
/// a fraction for `%` (0.1 % is 0.001), bytes, per second, a plain count, or a fraction per hour for
/// trends. `window` (seconds) is set only for `over` rules; a trend rule never has one.
public struct Threshold: Sendable, Equatable, CustomStringConvertible {
    /// What is measured.
    public var quantity: ThresholdQuantity
    /// True for `trend(…)`: the rule judges the quantity's slope per hour relative to its mean.
    public var isTrend: Bool
    public var comparison: ThresholdComparison
    /// The bound in `unit`.
    public var bound: Double
    public var unit: ThresholdUnit
    /// `over WINDOW`: every window of this many seconds after the warm-up must pass.
    public var window: Double?
    /// The rule as written (whitespace trimmed), its name in results.
    public var text: String

    public init(
        quantity: ThresholdQuantity, isTrend: Bool = false, comparison: ThresholdComparison, bound: Double,
        unit: ThresholdUnit, window: Double? = nil, text: String
    ) {
        self.quantity = quantity
        self.isTrend = isTrend
        self.comparison = comparison
        self.bound = bound
        self.unit = unit
        self.window = window
        self.text = text
    }

    public var description: String { text }

    /// Parses one rule; throws `ThresholdSyntaxErrors` with every problem and its 1-based column.
    public static func parse(_ text: String) throws(ThresholdSyntaxErrors) -> Threshold {
        var parser = ThresholdParser(text: text)
        return try parser.parse()
    }
}

/// The comparison of a threshold.
public enum ThresholdComparison: String, Sendable, CaseIterable {
    case lessOrEqual = "<="
    case greaterOrEqual = ">="
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case greater = ">"

    /// True when `value OP bound` holds.
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
}

/// The canonical unit of a threshold's bound.
public enum ThresholdUnit: String, Sendable, CaseIterable {
    /// Latencies: written `800ms` or `1.5s`, stored in milliseconds.
    case milliseconds
    /// A plain number of things.
    case count
    /// Written `0.1%`, stored as 0.001.
    case fraction
    /// Written `50/s` or a plain number, per second.
    case perSecond
    /// Written `512MB`, `2GB`, `300MiB` or plain bytes.
    case bytes
    /// Trends: written `5%/h`, stored as 0.05 per hour (slope relative to the mean).
    case fractionPerHour
}
