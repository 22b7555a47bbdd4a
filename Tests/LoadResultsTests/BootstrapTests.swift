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

    static func runs(_ seeds: [UInt64], factors: [Double], intervals: Int = 5) -> [MeasuredRun] {
        zip(seeds, factors).map { seed, factor in
            MeasuredRun(
                directory: "run-\(seed)", manifest: nil, outcome: nil,
                intervals: Self.intervals(seed: seed, count: intervals, factor: factor))
        }
    }

    /// Three repeated runs per side: the runs are the resampled units for every metric, latency
    /// included — no row falls back to resampling recordings, although each side has fewer than
    /// `Bootstrap.minimumUnits` units.
    @Test func repeatedRunsAreResampledAsRunsForEveryMetric() {
        let same = Comparison.make(
            baseline: Self.runs([1, 2, 3], factors: [1, 1, 1]), candidate: Self.runs([4, 5, 6], factors: [1, 1, 1]),
            tolerances: Self.tolerances, force: true)
        #expect(same.method == .runs)
        #expect(same.baseline.units == 3 && same.candidate.units == 3)
        #expect(same.verdictWithheld == nil)
        #expect(!same.rows.isEmpty && same.rows.allSatisfy { !$0.ofRecordings }, "\(same.rows.filter(\.ofRecordings).map(\.metric.key))")
        #expect(same.rows.first { $0.metric.key == "login.p50" }?.verdict == .noSignificantChange)
        let slower = Comparison.make(
            baseline: Self.runs([1, 2, 3], factors: [1, 1, 1]), candidate: Self.runs([4, 5, 6], factors: [1.3, 1.3, 1.3]),
            tolerances: Self.tolerances, force: true)
        #expect(slower.rows.first { $0.metric.key == "login.p50" }?.verdict == .regressed)
        #expect(slower.rows.allSatisfy { !$0.ofRecordings })
        #expect(slower.outcome == .regressed)
    }

    /// Runs that differ from each other (one side's runs 0.8×, 1× and 1.25× as slow): resampled as
    /// runs, the interval is as wide as that variation and nothing is called a change; resampling
    /// the same data's recordings (what happened before) gives a narrow interval that sees none of it.
    @Test func runToRunVariationIsInTheInterval() throws {
        let baseline = Self.runs([1, 2, 3], factors: [0.8, 1, 1.25])
        let candidate = Self.runs([4, 5, 6], factors: [1.25, 0.8, 1.2])
        let comparison = Comparison.make(baseline: baseline, candidate: candidate, tolerances: Self.tolerances, force: true)
        let p50 = try #require(comparison.rows.first { $0.metric.key == "login.p50" })
        #expect(p50.verdict == .noSignificantChange, "\(p50)")
        #expect(p50.high! - p50.low! > 30, "run-to-run spread of ±20 % shows: [\(p50.low!), \(p50.high!)]")
        let recordings = try #require(
            Bootstrap(resamples: 400, seed: 1).latencyOfRecordings(
                baseline: baseline.map { $0.total.latency["login"]! }, candidate: candidate.map { $0.total.latency["login"]! },
                percentiles: [50]))[0]
        #expect(recordings.high - recordings.low < 10, "recordings alone: [\(recordings.low), \(recordings.high)]")
    }

    /// Runs per side → method, whether verdicts are given, and whether any row resampled recordings.
    @Test(arguments: [
        (baseline: 1, candidate: 1, method: Comparison.Method.intervals, judged: false),
        (baseline: 2, candidate: 2, method: .intervals, judged: false),
        (baseline: 3, candidate: 1, method: .intervals, judged: false),
        (baseline: 1, candidate: 3, method: .intervals, judged: false),
        (baseline: 3, candidate: 3, method: .runs, judged: true),
        (baseline: 5, candidate: 3, method: .runs, judged: true),
        (baseline: 6, candidate: 6, method: .runs, judged: true),
    ])
    func runsPerSideDecideTheMethodAndWhetherThereIsAVerdict(baseline: Int, candidate: Int, method: Comparison.Method, judged: Bool) {
        // The candidate is 30 % slower: judged comparisons regress, the others only indicate it.
        let comparison = Comparison.make(
            baseline: Self.runs(Array(1...UInt64(baseline)), factors: Array(repeating: 1, count: baseline), intervals: 10),
            candidate: Self.runs(Array(11...UInt64(10 + candidate)), factors: Array(repeating: 1.3, count: candidate), intervals: 10),
            tolerances: Self.tolerances, force: true)
        #expect(comparison.method == method)
        #expect((comparison.verdictWithheld == nil) == judged)
        #expect(comparison.rows.allSatisfy { !$0.ofRecordings })
        let p50 = comparison.rows.first { $0.metric.key == "login.p50" }
        if judged {
            #expect(comparison.outcome == .regressed)
            #expect(p50?.verdict == .regressed && p50?.indication == nil)
        } else {
            #expect(comparison.outcome == .insufficientRuns)
            #expect(comparison.regressed.isEmpty)
            #expect(p50?.verdict == .notJudged && p50?.indication == .regressed)
            #expect(comparison.rows.allSatisfy { $0.verdict == .notJudged || $0.verdict == .notMeasured })
        }
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
