/// The kept series of one scrape of a Prometheus/OpenMetrics endpoint, for one interval.
///
/// Keys are series as written (`name{label="value",…}`, labels sorted; a `sum(…)` selector's key is
/// its own). Gauges (and untyped series that are not known counters) are the values scraped at the
/// interval's end. Counters are the *increase* over `seconds` (the time between this scrape and the
/// previous one), so a count of events stays a count (412 listen-queue overflows) and a rate is
/// `increase / seconds`; a counter that went down was reset (a restart) and counts from zero, as in
/// Prometheus. A counter first seen in this scrape has no increase yet. Values are finite.
public struct SeriesSample: Sendable, Equatable, Codable {
    /// Seconds between the previous scrape and this one (what the increases are over); nil when
    /// there was no previous scrape (no increases then).
    public var seconds: Double?
    public var gauges: [String: Double]
    public var increases: [String: Double]
    /// How long the scrape took (connect to last byte), in milliseconds.
    public var scrapeMilliseconds: Double
    /// The body's size in bytes.
    public var bodyBytes: Int
    /// Samples in the body (kept or not).
    public var samplesSeen: Int
    /// Selected series not kept because the source's series or per-family limit was reached; nil when none.
    public var dropped: Int?

    public init(
        seconds: Double?, gauges: [String: Double], increases: [String: Double], scrapeMilliseconds: Double, bodyBytes: Int,
        samplesSeen: Int, dropped: Int? = nil
    ) {
        self.seconds = seconds
        self.gauges = gauges
        self.increases = increases
        self.scrapeMilliseconds = scrapeMilliseconds
        self.bodyBytes = bodyBytes
        self.samplesSeen = samplesSeen
        self.dropped = dropped
    }

    /// A counter's increase per second over the interval; nil when it has none.
    public func rate(_ key: String) -> Double? {
        guard let increase = increases[key], let seconds, seconds > 0 else { return nil }
        return increase / seconds
    }

    enum CodingKeys: String, CodingKey {
        case seconds, gauges, increases
        case scrapeMilliseconds = "scrape_ms"
        case bodyBytes = "body_bytes"
        case samplesSeen = "samples_seen"
        case dropped
    }
}
