/// A latency distribution as sparse HDR buckets: `(value µs, count)` pairs, ascending by value, each
/// value the bucket's highest equivalent value (as `LatencyHistogram.buckets` yields them).
///
/// The compact form `compare` keeps per interval (a dense HDR histogram is ~190 KB; an interval's
/// buckets are a few hundred pairs). Percentiles are read with HdrHistogram's rule, so they equal
/// `LatencyHistogram.microseconds(atPercentile:)` on the same data.
public struct BucketCounts: Sendable, Equatable {
    public private(set) var values: [UInt64]
    public private(set) var counts: [UInt64]

    public init() {
        values = []
        counts = []
    }

    public init(_ histogram: LatencyHistogram) {
        let buckets = histogram.buckets
        values = buckets.map(\.value)
        counts = buckets.map(\.count)
    }

    /// Pairs in any order; equal values add.
    public init(pairs: [(value: UInt64, count: UInt64)]) {
        var merged: [UInt64: UInt64] = [:]
        for pair in pairs where pair.count > 0 { merged[pair.value, default: 0] += pair.count }
        let sorted = merged.sorted { $0.key < $1.key }
        values = sorted.map(\.key)
        counts = sorted.map(\.value)
    }

    public var total: UInt64 { counts.reduce(0, +) }
    public var isEmpty: Bool { values.isEmpty }

    /// Adds another distribution (merging two sorted lists).
    public mutating func add(_ other: BucketCounts) {
        guard !other.isEmpty else { return }
        guard !isEmpty else {
            self = other
            return
        }
        var newValues: [UInt64] = []
        var newCounts: [UInt64] = []
        newValues.reserveCapacity(values.count + other.values.count)
        newCounts.reserveCapacity(values.count + other.values.count)
        var i = 0
        var j = 0
        while i < values.count || j < other.values.count {
            if j >= other.values.count || (i < values.count && values[i] < other.values[j]) {
                newValues.append(values[i])
                newCounts.append(counts[i])
                i += 1
            } else if i >= values.count || other.values[j] < values[i] {
                newValues.append(other.values[j])
                newCounts.append(other.counts[j])
                j += 1
            } else {
                newValues.append(values[i])
                newCounts.append(counts[i] + other.counts[j])
                i += 1
                j += 1
            }
        }
        values = newValues
        counts = newCounts
    }

    /// The value (µs) at or below which `percentile` % of the recordings fall (0 when empty).
    public func microseconds(atPercentile percentile: Double) -> UInt64 {
        Self.valueAtPercentile(percentile, values: values, counts: counts, total: total)
    }

    /// HdrHistogram's rule: the first bucket whose cumulative count reaches ⌈p/100 · total⌉ (at least 1).
    static func countAtPercentile(_ percentile: Double, total: UInt64) -> UInt64 {
        let requested = Swift.min(Swift.max(percentile.nextDown, 0), 100)
        return Swift.max(1, UInt64((requested * Double(total) / 100).rounded(.up)))
    }

    static func valueAtPercentile(_ percentile: Double, values: [UInt64], counts: [UInt64], total: UInt64) -> UInt64 {
        guard total > 0 else { return 0 }
        if percentile >= 100 { return values[values.count - 1] }
        let target = countAtPercentile(percentile, total: total)
        var running: UInt64 = 0
        for index in counts.indices {
            running += counts[index]
            if running >= target { return values[index] }
        }
        return values[values.count - 1]
    }
}
