/// Bounds on one Prometheus/OpenMetrics scrape, so that no endpoint — slow, broken or hostile — can
/// hold the monitor's thread past an interval or grow its memory: past `timeout`, `maxBodyBytes`,
/// `maxSamples`, `maxLineBytes` or `maxLabelsPerSeries`, the scrape is abandoned and the interval is
/// a gap; past `maxKeptSeries` or `maxSeriesPerFamily` (label cardinality), further new series are
/// not kept and counted as `dropped`. Memory per source is then at most the body plus the kept series.
public struct ScrapeLimits: Sendable, Equatable {
    /// Connect, request, the whole response and its parse, in seconds.
    public var timeout: Double = 2
    public var maxBodyBytes = 4 * 1_048_576
    /// Status line and headers.
    public var maxHeaderBytes = 16_384
    /// Samples in one body, kept or not.
    public var maxSamples = 200_000
    public var maxLineBytes = 65_536
    public var maxLabelsPerSeries = 64
    /// Series kept per source (before `sum`), and per metric family.
    public var maxKeptSeries = 2_048
    public var maxSeriesPerFamily = 256

    public init() {}

    public static let standard = ScrapeLimits()

    /// `4 MiB`, or bytes for a limit under 1 MiB.
    var bodyLimitText: String {
        maxBodyBytes >= 1_048_576 && maxBodyBytes % 1_048_576 == 0 ? "\(maxBodyBytes / 1_048_576) MiB" : "\(maxBodyBytes) bytes"
    }
}
