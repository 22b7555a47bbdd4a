import Histogram

/// An HDR histogram of latencies in microseconds, 1 µs .. 1 h, 3 significant digits (measurement rule
/// 4): never raw samples, never averaged percentiles; histograms merge by adding.
///
/// Values are recorded in nanoseconds and stored in microseconds; anything above one hour is clamped
/// to one hour (and still counted). Encodes compactly: only non-zero buckets, as `[value, count]` pairs
/// with delta-coded values, which round-trips bucket counts exactly (a full counts array would be
/// ~24k numbers per histogram).
///
/// Every reading is a bucket's highest equivalent value (percentiles, minimum, maximum), never an
/// exact recorded extreme, so a histogram reads the same before and after an encode and decode: a
/// report rendered from memory equals the one rendered from `intervals.jsonl` without converting
/// each interval's histograms (a reading moves by less than 0.1 %, the bucket width).
///
/// Storage is allocated on the first recording (`LatencyHistogram()` and `reset()` cost nothing: the
/// dense counts are ~190 KB and HdrHistogram fills them element by element); adding to an empty
/// histogram shares the other's storage (copy on write).
public struct LatencyHistogram: Sendable, Equatable {
    public static let highestMicroseconds: UInt64 = 3_600_000_000

    /// nil until something is recorded or added; never empty when set.
    private var storage: Histogram<UInt64>?

    public init() {}

    private static func makeStorage() -> Histogram<UInt64> {
        Histogram(
            lowestDiscernibleValue: 1, highestTrackableValue: highestMicroseconds,
            numberOfSignificantValueDigits: .three)
    }

    /// Records one latency given in nanoseconds.
    public mutating func record(nanoseconds: UInt64) {
        record(microseconds: max(1, nanoseconds / 1000))
    }

    public mutating func record(microseconds: UInt64, count: UInt64 = 1) {
        guard count > 0 else { return }
        if storage == nil { storage = Self.makeStorage() }
        _ = storage!.record(min(max(microseconds, 1), Self.highestMicroseconds), count: count)
    }

    public mutating func add(_ other: LatencyHistogram) {
        guard let added = other.storage else { return }
        if storage == nil { storage = added } else { storage!.add(added) }
    }

    /// Empties the histogram and releases its storage.
    public mutating func reset() { storage = nil }

    public var count: UInt64 { storage?.totalCount ?? 0 }
    public var isEmpty: Bool { storage == nil }

    /// The value (µs) at or below which `percentile` % of recordings fall: the highest equivalent
    /// value of that bucket (0 when empty).
    public func microseconds(atPercentile percentile: Double) -> UInt64 {
        guard let storage else { return 0 }
        return storage.highestEquivalentForValue(storage.valueAtPercentile(percentile))
    }
    /// The largest recording's bucket, as its highest equivalent value (0 when empty).
    public var maxMicroseconds: UInt64 { storage?.max ?? 0 }
    /// The smallest recording's bucket, as its highest equivalent value (0 when empty).
    public var minMicroseconds: UInt64 { storage.map { $0.highestEquivalentForValue($0.min) } ?? 0 }
    public var meanMicroseconds: Double { storage?.mean ?? 0 }

    /// Milliseconds at a percentile, for reports.
    public func milliseconds(atPercentile percentile: Double) -> Double {
        Double(microseconds(atPercentile: percentile)) / 1000
    }

    /// Non-zero buckets as (highest equivalent value µs, count), ascending.
    public var buckets: [(value: UInt64, count: UInt64)] {
        storage?.recordedValues().map { ($0.value, $0.count) } ?? []
    }

    /// The percentile spectrum: (percentile, value µs) points for charts.
    public func spectrum(ticksPerHalfDistance: Int = 5) -> [(percentile: Double, microseconds: UInt64)] {
        guard let storage else { return [] }
        return storage.percentiles(ticksPerHalfDistance: ticksPerHalfDistance).map { ($0.percentile, $0.value) }
    }

    public static func == (lhs: LatencyHistogram, rhs: LatencyHistogram) -> Bool {
        lhs.count == rhs.count && lhs.buckets.elementsEqual(rhs.buckets) { $0.value == $1.value && $0.count == $1.count }
    }
}

extension LatencyHistogram: Codable {
    /// `[v1, c1, dv2, c2, ...]`: values delta-coded against the previous bucket.
    public init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        var value: UInt64 = 0
        while !container.isAtEnd {
            value += try container.decode(UInt64.self)
            let count = try container.decode(UInt64.self)
            record(microseconds: value, count: count)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        var previous: UInt64 = 0
        for bucket in buckets {
            try container.encode(bucket.value - previous)
            try container.encode(bucket.count)
            previous = bucket.value
        }
    }
}
