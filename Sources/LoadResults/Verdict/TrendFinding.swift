/// Does a quantity drift across a long run? A least-squares slope over per-interval values after the
/// warm-up (and before the load stopped), per hour, absolute and relative to the mean.
///
/// `drifting_up` is true when the slope is positive and its 95 % confidence interval excludes 0
/// (see `TrendLine`). Values are in `unit` (per hour for slopes).
public struct TrendFinding: Sendable, Equatable, Codable {
    public var metric: String
    public var unit: VerdictUnit
    public var intervals: Int
    public var mean: Double
    public var slopePerHour: Double
    /// 95 % confidence interval of the slope per hour.
    public var slopeLowPerHour: Double
    public var slopeHighPerHour: Double
    /// Slope ÷ mean per hour (0.05 = +5 %/h); nil when the mean is 0.
    public var relativePerHour: Double?
    public var significant: Bool
    public var driftingUp: Bool

    enum CodingKeys: String, CodingKey {
        case metric, unit, intervals, mean
        case slopePerHour = "slope_per_h"
        case slopeLowPerHour = "slope_low_per_h"
        case slopeHighPerHour = "slope_high_per_h"
        case relativePerHour = "relative_per_h"
        case significant
        case driftingUp = "drifting_up"
    }

    public init(metric: String, unit: VerdictUnit, line: TrendLine) {
        self.metric = metric
        self.unit = unit
        intervals = line.count
        mean = line.meanY
        slopePerHour = line.slope
        slopeLowPerHour = line.slope - line.slopeMargin
        slopeHighPerHour = line.slope + line.slopeMargin
        relativePerHour = line.relativeSlope
        significant = line.isSignificant
        driftingUp = significant && line.slope > 0
    }

    /// `login.p99 drifts up: +12.5 %/h (mean 80.2 ms, slope +10.0 ms/h, 95 % CI 4.1…15.9, 96 intervals)`.
    public var line: String {
        let verdict = driftingUp ? "drifts up" : significant ? "drifts down" : "no significant drift"
        let relative = relativePerHour.map { VerdictUnit.fractionPerHour.format($0) } ?? "–"
        return "\(metric) \(verdict): \(relative) (mean \(unit.format(mean)), slope \(unit.format(slopePerHour))/h, "
            + "95 % CI \(unit.format(slopeLowPerHour))…\(unit.format(slopeHighPerHour)) per h, \(intervals) intervals)"
    }
}
