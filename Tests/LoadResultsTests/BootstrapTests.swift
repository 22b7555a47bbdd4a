import Foundation
import Testing

@testable import LoadResults

/// The bootstrap on synthetic, seeded latency data: the same distribution gives no significant
/// change, a 30 % slower one regresses, a 30 % faster one improves; resampled runs behave alike;
/// percentiles of compact buckets equal the HDR histogram's.
@Suite struct BootstrapTests {
    /// `count` intervals of `samples` latencies each: 40 ms plus an exponential tail (mean 10 ms),
    /// multiplied by `factor`, drawn from a seeded generator.
    static func intervals(seed: UInt64, count: Int = 20, samples: Int = 300, factor: Double = 1) -> [MeasuredUnit] {
        var generator = ResampleGenerator(seed: seed)
        return (0..<count).map { index in
            var histogram = LatencyHistogram()
            for _ in 0..<samples {
                let uniform = Double.random(in: Double.ulpOfOne..<1, using: &generator)
                let milliseconds = (40 - 10 * log(uniform)) * factor
                histogram.record(nanoseconds: UInt64(milliseconds * 1_000_000))
            }
            var unit = MeasuredUnit()
            unit.latency["login"] = BucketCounts(histogram)
            unit.seconds = 1
            unit.end = Double(index + 1)
            unit.sessionsStarted = UInt64(samples)
            unit.sessionsLoggedIn = UInt64(Double(samples) / factor)
            return unit
        }
    }

    static let tolerances = Tolerances(["p50": 5, "p90": 5, "p99": 10, "throughput": 5])

    static func verdicts(_ baseline: [MeasuredUnit], _ candidate: [MeasuredUnit]) -> [String: ChangeVerdict] {
        let rows = Comparison.rows(baseline: baseline, candidate: candidate, tolerances: tolerances, bootstrap: Bootstrap(resamples: 400, seed: 7))
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.metric.key, $0.verdict) })
    }

    @Test func theSameDistributionIsNoSignificantChange() {
        let verdicts = Self.verdicts(Self.intervals(seed: 1), Self.intervals(seed: 2))
        for key in ["login.p50", "login.p90", "login.p99", "throughput.logins"] {
            #expect(verdicts[key] == .noSignificantChange, "\(key): \(String(describing: verdicts[key]))")
        }
    }

    @Test func thirtyPercentSlowerRegressesAndFewerLoginsPerSecondToo() {
        let verdicts = Self.verdicts(Self.intervals(seed: 1), Self.intervals(seed: 2, factor: 1.3))
        for key in ["login.p50", "login.p90", "login.p99", "throughput.logins"] {
            #expect(verdicts[key] == .regressed, "\(key): \(String(describing: verdicts[key]))")
        }
        #expect(verdicts["error_rate"] == .noSignificantChange)
    }

    @Test func thirtyPercentFasterImproves() {
        let verdicts = Self.verdicts(Self.intervals(seed: 1), Self.intervals(seed: 2, factor: 0.7))
        for key in ["login.p50", "login.p90", "login.p99", "throughput.logins"] {
            #expect(verdicts[key] == .improved, "\(key): \(String(describing: verdicts[key]))")
        }
    }

    @Test func theIntervalContainsThePointEstimateAndTheTrueShift() throws {
        let estimate = try #require(
            Bootstrap(resamples: 500, seed: 3).latency(
                baseline: Self.intervals(seed: 11).map { $0.latency["login"]! },
                candidate: Self.intervals(seed: 12, factor: 1.3).map { $0.latency["login"]! }, percentiles: [50]))[0]
        #expect(estimate.low <= estimate.change && estimate.change <= estimate.high)
        #expect(estimate.low < 30 && 30 < estimate.high, "true shift +30 % inside [\(estimate.low), \(estimate.high)]")
        #expect(estimate.high - estimate.low < 10, "3,000 samples per side give a narrow interval")
    }

    @Test func theSameSeedGivesTheSameInterval() {
        let a = Self.intervals(seed: 1)
        let b = Self.intervals(seed: 2, factor: 1.05)
        let first = Comparison.rows(baseline: a, candidate: b, tolerances: Self.tolerances, bootstrap: Bootstrap(resamples: 200, seed: 9))
        let second = Comparison.rows(baseline: a, candidate: b, tolerances: Self.tolerances, bootstrap: Bootstrap(resamples: 200, seed: 9))
        #expect(first == second)
    }

    /// Three repeated runs per side: the runs are the resampled units.
    @Test func repeatedRunsAreResampledAsRuns() {
        func runs(_ seeds: [UInt64], factor: Double) -> [MeasuredRun] {
            seeds.map {
                MeasuredRun(directory: "run-\($0)", manifest: nil, outcome: nil, intervals: Self.intervals(seed: $0, count: 5, factor: factor))
            }
        }
        let same = Comparison.make(
            baseline: runs([1, 2, 3], factor: 1), candidate: runs([4, 5, 6], factor: 1), tolerances: Self.tolerances, force: true)
        #expect(same.method == .runs)
        #expect(same.baseline.units == 3)
        #expect(same.rows.first { $0.metric.key == "login.p50" }?.verdict == .noSignificantChange)
        let slower = Comparison.make(
            baseline: runs([1, 2, 3], factor: 1), candidate: runs([4, 5, 6], factor: 1.3), tolerances: Self.tolerances, force: true)
        #expect(slower.rows.first { $0.metric.key == "login.p50" }?.verdict == .regressed)
        #expect(slower.outcome == .regressed)
    }

    @Test(arguments: [1.0, 10, 50, 90, 99, 99.9])
    func bucketPercentilesEqualTheHistogram(percentile: Double) {
        var histogram = LatencyHistogram()
        var generator = ResampleGenerator(seed: 5)
        for _ in 0..<5000 { histogram.record(microseconds: UInt64.random(in: 1...2_000_000, using: &generator)) }
        let buckets = BucketCounts(histogram)
        #expect(buckets.microseconds(atPercentile: percentile) == histogram.microseconds(atPercentile: percentile))
        // Merging sparse buckets equals adding histograms.
        var half = LatencyHistogram()
        for _ in 0..<700 { half.record(microseconds: UInt64.random(in: 1...50_000, using: &generator)) }
        var sum = histogram
        sum.add(half)
        var merged = buckets
        merged.add(BucketCounts(half))
        #expect(merged == BucketCounts(sum))
    }

    @Test(arguments: [
        (low: 12.0, high: 40.0, higherIsWorse: true, verdict: ChangeVerdict.regressed),
        (low: 3.0, high: 40.0, higherIsWorse: true, verdict: .noSignificantChange),
        (low: -40.0, high: -12.0, higherIsWorse: true, verdict: .improved),
        (low: -40.0, high: -12.0, higherIsWorse: false, verdict: .regressed),
        (low: 12.0, high: 40.0, higherIsWorse: false, verdict: .improved),
        (low: -9.0, high: 9.0, higherIsWorse: false, verdict: .noSignificantChange),
    ])
    func verdictRule(low: Double, high: Double, higherIsWorse: Bool, verdict: ChangeVerdict) {
        #expect(ChangeVerdict.judge(low: low, high: high, tolerance: 10, higherIsWorse: higherIsWorse) == verdict)
    }
}

/// With too few units (a short run's logins all fall into one interval), the recordings are
/// resampled instead, so the interval is not collapsed to a point.
@Suite struct FewUnitsTests {
    @Test func oneIntervalPerSideResamplesRecordings() throws {
        let base = BootstrapTests.intervals(seed: 1, count: 1, samples: 2000)
        let same = BootstrapTests.intervals(seed: 2, count: 1, samples: 2000)
        let slower = BootstrapTests.intervals(seed: 3, count: 1, samples: 2000, factor: 1.3)
        let rows = Comparison.rows(
            baseline: base, candidate: same, tolerances: BootstrapTests.tolerances, bootstrap: Bootstrap(resamples: 400, seed: 1))
        let p50 = try #require(rows.first { $0.metric.key == "login.p50" })
        #expect(p50.ofRecordings)
        #expect(p50.high! > p50.low!, "a real interval, not a point")
        #expect(p50.verdict == .noSignificantChange)
        let slowRows = Comparison.rows(
            baseline: base, candidate: slower, tolerances: BootstrapTests.tolerances, bootstrap: Bootstrap(resamples: 400, seed: 1))
        #expect(slowRows.first { $0.metric.key == "login.p50" }?.verdict == .regressed)
    }
}
