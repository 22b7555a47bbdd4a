// The canonical unit of a threshold's bound and of a measured value.

/// The canonical unit of a threshold's bound and of a measured value; raw values are what results
/// files show.
public enum VerdictUnit: String, Sendable, Codable, CaseIterable {
    case milliseconds = "ms"
    case count, fraction
    case perSecond = "per_s"
    case bytes
    case fractionPerHour = "fraction_per_h"
}
