// How a verdict unit's values read in reports: `812 ms`, `0.05 %`, `12.3/s`.
import Foundation

extension VerdictUnit {
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
