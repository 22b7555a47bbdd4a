import Histogram

/// An HDR histogram of latencies in microseconds, 1 µs .. 1 h, 3 significant digits (measurement rule
/// 4): never raw samples, never averaged percentiles; histograms merge by adding.
///
/// Values are recorded in nanoseconds and stored in microseconds; anything above one hour is clamped
/// to one hour (and still counted). Encodes compactly: only non-zero buckets, as `[value, count]` pairs
/// with delta-coded values, which round-trips bucket counts exactly (a full counts array would be
/// ~24k numbers per histogram).
public struct LatencyHistogram: Sendable, Equatable {
    public static let highestMicroseconds: UInt64 = 3_600_000_000

    private(set) var histogram: Histogram<UInt64>

    public init() {
        histogram = Histogram(
            lowestDiscernibleValue: 1, highestTrackableValue: Self.highestMicroseconds,
            numberOfSignificantValueDigits: .three)
    }

    /// Records one latency given in nanoseconds.
    public mutating func record(nanoseconds: UInt64) {
        record(microseconds: max(1, nanoseconds / 1000))
    }

    public mutating func record(microseconds: UInt64, count: UInt64 = 1) {
        _ = histogram.record(min(max(microseconds, 1), Self.highestMicroseconds), count: count)
    }

    public mutating func add(_ other: LatencyHistogram) { histogram.add(other.histogram) }
    public mutating func reset() { histogram.reset() }

    public var count: UInt64 { histogram.totalCount }
    public var isEmpty: Bool { histogram.totalCount == 0 }
    /// The value (µs) at or below which `percentile` % of recordings fall (0 when empty).
    public func microseconds(atPercentile percentile: Double) -> UInt64 {
        isEmpty ? 0 : histogram.valueAtPercentile(percentile)
    }
    public var maxMicroseconds: UInt64 { isEmpty ? 0 : histogram.max }
    public var minMicroseconds: UInt64 { isEmpty ? 0 : histogram.min }
    public var meanMicroseconds: Double { isEmpty ? 0 : histogram.mean }

    /// Milliseconds at a percentile, for reports.
    public func milliseconds(atPercentile percentile: Double) -> Double {
        Double(microseconds(atPercentile: percentile)) / 1000
    }

    /// Non-zero buckets as (highest equivalent value µs, count), ascending.
    public var buckets: [(value: UInt64, count: UInt64)] {
        histogram.recordedValues().map { ($0.value, $0.count) }
    }

    /// This histogram as `intervals.jsonl` holds it (and decoding gives it back): every bucket's count
    /// at the bucket's highest equivalent value, so exact extremes inside a bucket are gone. The same
    /// value as an encode and decode, without the JSON.
    public var asWritten: LatencyHistogram {
        var written = LatencyHistogram()
        for bucket in histogram.recordedValues() { written.record(microseconds: bucket.value, count: bucket.count) }
        return written
    }

    /// The percentile spectrum: (percentile, value µs) points for charts.
    public func spectrum(ticksPerHalfDistance: Int = 5) -> [(percentile: Double, microseconds: UInt64)] {
        guard !isEmpty else { return [] }
        return histogram.percentiles(ticksPerHalfDistance: ticksPerHalfDistance).map { ($0.percentile, $0.value) }
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
