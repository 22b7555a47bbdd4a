// The one threshold model: what the profile's and `--threshold`'s grammar produces and what the
// verdict, the threshold watcher and `capacity` judge.

/// One pass/fail rule on a run's measurements, parsed once from `METRIC.STAT OP VALUE [over WINDOW]`
/// or `trend(METRIC.STAT) OP RATE` (see docs/PROFILES.md, "Thresholds"; the grammar is
/// `Threshold.parse` in LoadProfile) and judged as parsed by `VerdictEvaluator`.
///
/// Contract: `bound` is in the quantity's canonical unit (`unit`): milliseconds for latencies,
/// a fraction for `%` (0.1 % is 0.001), bytes, per second, a plain count, or a fraction per hour for
/// trends. `window` (seconds) is set only for `over` rules; a trend rule never has one.
public struct Threshold: Sendable, Equatable, CustomStringConvertible {
    /// What is measured.
    public var quantity: ThresholdQuantity
    public var comparison: ThresholdComparison
    /// The bound in `unit`.
    public var bound: Double
    public var unit: VerdictUnit
    /// `over WINDOW`: every window of this many seconds after the warm-up must pass; nil: judged
    /// over the whole run after the warm-up.
    public var window: Double?
    /// True for `trend(…)`: the rule judges the quantity's slope per hour relative to its mean.
    public var isTrend: Bool
    /// The rule as written (whitespace trimmed), its name in results.
    public var text: String

    public init(
        quantity: ThresholdQuantity, comparison: ThresholdComparison, bound: Double, unit: VerdictUnit,
        window: Double? = nil, isTrend: Bool = false, text: String
    ) {
        self.quantity = quantity
        self.comparison = comparison
        self.bound = bound
        self.unit = unit
        self.window = window
        self.isTrend = isTrend
        self.text = text
    }

    public var description: String { text }

    /// True when `value` passes.
    public func passes(_ value: Double) -> Bool { comparison.holds(value, bound) }
}

/// The comparison of a threshold; raw values are the operators as written.
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

    /// The worse of two values for this comparison (the one further from passing): the larger for
    /// `<`/`<=`, the smaller for `>`/`>=`; for `==`/`!=` the first that fails.
    public func worse(_ a: Double, _ b: Double, bound: Double) -> Double {
        switch self {
        case .less, .lessOrEqual: return max(a, b)
        case .greater, .greaterOrEqual: return min(a, b)
        case .equal, .notEqual: return holds(a, bound) ? b : a
        }
    }
}
