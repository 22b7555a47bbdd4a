import Foundation
import Testing

@testable import LoadResults

/// Snapshots merge like numbers: associative, commutative; histograms give exact known percentiles
/// and survive their compact encoding bit for bit.
@Suite struct SnapshotTests {
    /// A deterministic pseudo-random snapshot.
    static func snapshot(seed: UInt64) -> IntervalSnapshot {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % bound
        }
        var snapshot = IntervalSnapshot(start: 0, end: 5)
        for name in ["login", "message", "roster.get"] where next(4) > 0 {
            var histogram = LatencyHistogram()
            for _ in 0..<(50 + next(200)) { histogram.record(nanoseconds: 1_000 + next(2_000_000_000)) }
            snapshot.latency[name] = histogram
            snapshot.serviceLatency[name] = histogram
        }
        for counter in [Counter.sessionsStarted, .messagesSent, .bytesSent] { snapshot.counters[counter.name] = next(10_000) }
        snapshot.errors["connect-refused"] = next(3)
        if next(2) == 0 { snapshot.errors["timeout-login"] = 1 + next(5) }
        snapshot.gauges["sessions_online"] = Int64(next(500))
        snapshot.loopLag.record(nanoseconds: next(50_000_000))
        snapshot.ledger = LedgerCounts(lost: next(3), duplicated: next(2), reordered: next(2))
        return snapshot
    }

    @Test(arguments: 0..<20)
    func mergeIsAssociativeAndCommutative(seed: UInt64) {
        let a = Self.snapshot(seed: seed)
        let b = Self.snapshot(seed: seed + 100)
        let c = Self.snapshot(seed: seed + 200)
        #expect(a.merging(b) == b.merging(a))
        #expect(a.merging(b).merging(c) == a.merging(b.merging(c)))
        #expect(a.merging(b).merging(c) == c.merging(a).merging(b))
        var accumulated = IntervalSnapshot()
        for part in [a, b, c] { accumulated.accumulate(part) }
        #expect(accumulated.counters == a.merging(b).merging(c).counters)
        #expect(accumulated.latency == a.merging(b).merging(c).latency)
    }

    @Test func percentilesOfKnownInputs() {
        var histogram = LatencyHistogram()
        for ms in 1...1000 { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        #expect(histogram.count == 1000)
        // 3 significant digits: values are exact to within 0.1 %.
        #expect(abs(histogram.milliseconds(atPercentile: 50) - 500) <= 0.5)
        #expect(abs(histogram.milliseconds(atPercentile: 90) - 900) <= 0.9)
        #expect(abs(histogram.milliseconds(atPercentile: 99) - 990) <= 1)
        #expect(abs(histogram.milliseconds(atPercentile: 99.9) - 999) <= 1)
        #expect(abs(Double(histogram.maxMicroseconds) / 1000 - 1000) <= 1)
        var single = LatencyHistogram()
        single.record(nanoseconds: 2_500)
        #expect(single.microseconds(atPercentile: 50) == 2)  // 2.5 µs → 2 µs bucket
        var clamped = LatencyHistogram()
        clamped.record(nanoseconds: 10 * 3_600_000_000_000)  // 10 h → counted, clamped to 1 h
        #expect(clamped.count == 1 && clamped.maxMicroseconds >= 3_590_000_000)
        #expect(LatencyHistogram().milliseconds(atPercentile: 99) == 0)
    }

    @Test func mergedPercentilesEqualThoseOfAllSamples() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var all = LatencyHistogram()
        for ms in 1...100 {
            a.record(nanoseconds: UInt64(ms) * 1_000_000)
            all.record(nanoseconds: UInt64(ms) * 1_000_000)
        }
        for ms in 901...1000 {
            b.record(nanoseconds: UInt64(ms) * 1_000_000)
            all.record(nanoseconds: UInt64(ms) * 1_000_000)
        }
        a.add(b)
        #expect(a == all)
        #expect(abs(a.milliseconds(atPercentile: 50) - 100) <= 0.1)  // not the average of the two medians
    }

    @Test(arguments: 0..<5)
    func compactEncodingRoundTripsExactly(seed: UInt64) throws {
        let original = Self.snapshot(seed: seed)
        let line = try ResultsDirectory.line(for: original)
        let decoded = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line)
        #expect(decoded == original)
        // Compact: a few hundred non-zero buckets, not the ~24k-entry counts array.
        #expect(line.count < 40_000, "line is \(line.count) bytes")
    }

    @Test func generatorSaturationRule() {
        #expect(
            !GeneratorHealth(
                cpuPercent: 150, cpuSeconds: 7, rssBytes: 1, openFileDescriptors: 1, loopLagP99Milliseconds: 10, loopLagMaxMilliseconds: 20, cores: 2
            ).saturated)
        #expect(
            GeneratorHealth(
                cpuPercent: 185, cpuSeconds: 9, rssBytes: 1, openFileDescriptors: 1, loopLagP99Milliseconds: 10, loopLagMaxMilliseconds: 20, cores: 2
            ).saturated)
        #expect(
            GeneratorHealth(
                cpuPercent: 20, cpuSeconds: 1, rssBytes: 1, openFileDescriptors: 1, loopLagP99Milliseconds: 80, loopLagMaxMilliseconds: 90, cores: 2
            ).saturated)
    }
}
