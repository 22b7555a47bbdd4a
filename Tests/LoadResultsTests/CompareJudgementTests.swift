// Tests of what `compare` and `ab` judge, on plain values: latency floors, error rate as a
// proportion, and the paired bootstrap over rounds.
import Foundation
import Testing

@testable import LoadResults

@Suite struct CompareJudgementTests {
    /// One unit whose login latencies are `milliseconds` (each recorded `repeats` times).
    static func unit(_ milliseconds: [Double], repeats: Int = 20, started: UInt64 = 0, failed: UInt64 = 0) -> MeasuredUnit {
        var histogram = LatencyHistogram()
        for _ in 0..<repeats {
            for value in milliseconds { histogram.record(nanoseconds: UInt64(value * 1_000_000)) }
        }
        var unit = MeasuredUnit()
        unit.latency["login.connect"] = BucketCounts(histogram)
        unit.seconds = 1
        unit.sessionsStarted = started
        unit.sessionsFailed = failed
        return unit
    }

    static func run(_ name: String, _ units: [MeasuredUnit]) -> MeasuredRun {
        MeasuredRun(directory: name, manifest: nil, outcome: nil, intervals: units)
    }

    /// Three runs per side whose login.connect latencies are `base` and `candidate` ms (±5 % between
    /// runs): a doubling of a sub-millisecond figure stays under the 1 ms floor; a doubling of a
    /// 40 ms figure does not.
    @Test(arguments: [
        (base: 0.2, candidate: 0.4, key: "login.connect.p50", verdict: ChangeVerdict.noSignificantChange),
        (base: 0.3, candidate: 0.9, key: "login.connect.p50", verdict: .noSignificantChange),
        (base: 0.5, candidate: 2.5, key: "login.connect.p50", verdict: .regressed),
        (base: 40, candidate: 80, key: "login.connect.p50", verdict: .regressed),
        (base: 40, candidate: 41, key: "login.connect.p50", verdict: .noSignificantChange),
        (base: 2, candidate: 5, key: "login.connect.p99", verdict: .noSignificantChange),
        (base: 2, candidate: 8, key: "login.connect.p99", verdict: .regressed),
    ])
    func latencyChangesMustExceedTheFloor(base: Double, candidate: Double, key: String, verdict: ChangeVerdict) throws {
        let factors = [0.95, 1, 1.05]
        let baseline = factors.enumerated().map { Self.run("a\($0.offset)", [Self.unit([base * $0.element])]) }
        let candidates = factors.enumerated().map { Self.run("b\($0.offset)", [Self.unit([candidate * $0.element])]) }
        let comparison = Comparison.make(baseline: baseline, candidate: candidates, bootstrap: Bootstrap(resamples: 300, seed: 2), force: true)
        let row = try #require(comparison.rows.first { $0.metric.key == key })
        #expect(row.verdict == verdict, "\(row)")
        #expect(row.floor == Tolerances().floor(for: row.metric))
        #expect(row.tolerance >= Tolerances().tolerance(for: row.metric))
    }

    @Test func theFloorShowsInTheTextWhereItDecides() {
        let baseline = (0..<3).map { Self.run("a\($0)", [Self.unit([0.2])]) }
        let candidate = (0..<3).map { Self.run("b\($0)", [Self.unit([0.4])]) }
        let text = CompareTextReport.render(Comparison.make(baseline: baseline, candidate: candidate, force: true))
        let line = text.split(separator: "\n").first { $0.hasPrefix("login.connect.p50 ") }
        #expect(line?.contains("(1.00 ms)") == true && line?.hasSuffix("no significant change") == true, "\(text)")
    }

    /// Error rate = sessions failed / sessions started, a proportion: an interval whose failures
    /// (of sessions started earlier) outnumber its starts counts as 100 %, and the interval of the
    /// change stays within [−100, +100] pp.
    static let errorRateCases: [(failed: [UInt64], started: [UInt64], value: Double)] = [
        ([0, 0, 0], [10, 10, 10], 0),
        ([1, 0, 1], [10, 10, 0], 10),
        ([30, 30, 30], [10, 10, 10], 100),
        ([5, 5, 5], [10, 10, 10], 50),
    ]

    @Test(arguments: errorRateCases)
    func errorRateIsAProportion(failed: [UInt64], started: [UInt64], value: Double) throws {
        let units = zip(failed, started).map { Self.unit([10], started: $1, failed: $0) }
        let total = units.reduce(into: MeasuredUnit()) { $0.add($1) }
        #expect(abs(total.value(of: .errorRate)! - value) < 1e-9)
        let clean = (0..<3).map { _ in Self.unit([10], started: 10) }
        let estimate = try #require(
            Bootstrap(resamples: 500, seed: 4).ratio(
                baseline: clean.compactMap { $0.fraction(for: .errorRate) }, candidate: units.compactMap { $0.fraction(for: .errorRate) },
                scale: 100, relative: false, proportion: true))
        #expect(estimate.low >= -100 && estimate.high <= 100, "[\(estimate.low), \(estimate.high)]")
        #expect(estimate.candidate <= 100)
    }

    /// Intervals where sessions failed that started in other intervals: every resample stays a
    /// proportion, so no interval of the change leaves [−100, +100] pp.
    @Test func aRateNeverLeavesTheHundredPercentBounds() throws {
        let failing = [Self.unit([10], started: 20, failed: 0), Self.unit([10], started: 0, failed: 20), Self.unit([10], started: 1, failed: 3)]
        let fine = [Self.unit([10], started: 0, failed: 2), Self.unit([10], started: 20, failed: 0), Self.unit([10], started: 1, failed: 0)]
        let rows = Comparison.rows(
            baseline: fine, candidate: failing, tolerances: Tolerances(), bootstrap: Bootstrap(resamples: 500, seed: 9))
        let row = try #require(rows.first { $0.metric.key == "error_rate" })
        #expect(row.low! >= -100 && row.high! <= 100, "\(row)")
        #expect(row.baseline! <= 100 && row.candidate! <= 100)
    }

    /// The paired bootstrap over rounds: the per-round difference is what is resampled, so a drift
    /// common to both sides of a round (round 3 is twice as slow for both) does not widen it.
    @Test(arguments: [
        (baseline: [10.0, 12, 20], candidate: [10.1, 12.1, 20.2], relative: true, within: (-5.0, 5.0)),
        (baseline: [10.0, 12, 20], candidate: [13, 15.6, 26], relative: true, within: (25.0, 35.0)),
        (baseline: [0.0, 1, 2], candidate: [1, 2, 3], relative: false, within: (0.99, 1.01)),
    ])
    func pairedRoundsResampleTheDifferences(baseline: [Double], candidate: [Double], relative: Bool, within: (Double, Double)) throws {
        let estimate = try #require(
            Bootstrap(resamples: 500, seed: 1).paired(baseline: baseline.map { $0 }, candidate: candidate.map { $0 }, relative: relative))
        #expect(within.0 <= estimate.low && estimate.high <= within.1, "[\(estimate.low), \(estimate.high)]")
        #expect(estimate.low <= estimate.change && estimate.change <= estimate.high)
        #expect(abs(estimate.baseline - baseline.reduce(0, +) / Double(baseline.count)) < 1e-9)
    }

    @Test func pairedRoundsWithoutBothSidesAreLeftOut() throws {
        let estimate = try #require(Bootstrap(resamples: 100, seed: 1).paired(baseline: [10, nil, 10], candidate: [20, 5, nil], relative: true))
        #expect(estimate.change == 100 && estimate.low == 100 && estimate.high == 100)
        #expect(Bootstrap().paired(baseline: [nil, 1], candidate: [1, nil], relative: true) == nil)
    }

    /// `ab`'s judgement: rounds → paired rows; 3 rounds give verdicts, fewer do not.
    @Test(arguments: [(rounds: 1, judged: false), (rounds: 2, judged: false), (rounds: 3, judged: true), (rounds: 5, judged: true)])
    func pairedComparisonsJudgeFromThreeRounds(rounds: Int, judged: Bool) throws {
        // Rounds drift (each slower than the last) but the candidate is 50 % slower in every round.
        let baseline = (0..<rounds).map { Self.run("r\($0)-a", [Self.unit([20 + 10 * Double($0)], started: 10)]) }
        let candidate = (0..<rounds).map { Self.run("r\($0)-b", [Self.unit([30 + 15 * Double($0)], started: 10)]) }
        let comparison = Comparison.make(
            baseline: baseline, candidate: candidate, bootstrap: Bootstrap(resamples: 300, seed: 3), force: true, paired: true)
        #expect(comparison.method == .pairedRounds)
        #expect(comparison.baseline.units == rounds)
        let row = try #require(comparison.rows.first { $0.metric.key == "login.connect.p50" })
        #expect(abs(row.change! - 50) < 1, "\(row)")
        if judged {
            #expect(row.verdict == .regressed && comparison.outcome == .regressed, "\(row)")
        } else {
            #expect(row.verdict == .notJudged && row.indication == .regressed)
            #expect(comparison.outcome == .insufficientRuns)
            #expect(CompareTextReport.render(comparison).contains("--rounds 3"))
        }
    }

    @Test func aPairedComparisonNeedsOneRunOfEachSidePerRound() {
        let comparison = Comparison.make(
            baseline: [Self.run("a", [Self.unit([1])])], candidate: [Self.run("b", [Self.unit([1])]), Self.run("c", [Self.unit([1])])],
            force: false, paired: true)
        #expect(comparison.problems.contains { $0.contains("one baseline and one candidate run per round") })
        #expect(comparison.outcome == .notComparable)
    }

    /// One run per side: changes and intervals are shown, never a verdict, and the text says why and
    /// how to get one.
    @Test func oneRunPerSideShowsChangesButGivesNoVerdict() throws {
        let slow = BootstrapTests.intervals(seed: 2, factor: 2)
        let comparison = Comparison.make(
            baseline: [Self.run("a", BootstrapTests.intervals(seed: 1))], candidate: [Self.run("b", slow)], force: true)
        #expect(comparison.outcome == .insufficientRuns)
        let row = try #require(comparison.rows.first { $0.metric.key == "login.p50" })
        #expect(row.change! > 50 && row.low != nil && row.high != nil)
        #expect(row.verdict == .notJudged && row.indication == .regressed)
        let text = CompareTextReport.render(comparison)
        #expect(text.contains("not judged (within runs: regressed)"), "\(text)")
        #expect(text.contains("outcome: no verdict — one run per side cannot see run-to-run variation"), "\(text)")
        #expect(text.contains("--baseline A1 A2 A3 --candidate B1 B2 B3") && text.contains("xmppload ab"), "\(text)")
        let json = String(decoding: try JSONEncoder().encode(comparison), as: UTF8.self)
        #expect(json.contains("\"outcome\":\"insufficient runs\"") && json.contains("\"verdict_withheld\""), "\(json)")
    }

    /// Hesterberg's expansion of a bootstrap interval over n units: t(0.975, n−1) / 1.96 × √(n/(n−1)).
    @Test(arguments: [(units: 0, factor: 1.0), (1, 1), (2, 9.168), (3, 2.689), (5, 1.584), (10, 1.218), (31, 1.059), (100, 1.017)])
    func theExpansionFactorShrinksWithUnits(units: Int, factor: Double) {
        #expect(abs(Bootstrap.expansion(units: units) - factor) < 0.002, "\(Bootstrap.expansion(units: units))")
    }

    @Test func anExpandedIntervalStaysWithinTheMetricsBounds() {
        let rate = Bootstrap.Estimate(baseline: 10, candidate: 90, change: 80, low: 60, high: 95)
        let widened = Bootstrap.expanded(rate, units: 3, bounds: -100...100)
        #expect(widened.high == 100 && abs(widened.low - (80 - 2.689 * 20)) < 0.05, "\(widened)")
        let relative = Bootstrap.Estimate(baseline: 10, candidate: 5, change: -50, low: -80, high: -40)
        let widenedRelative = Bootstrap.expanded(relative, units: 3, bounds: -100...Double.greatestFiniteMagnitude)
        #expect(widenedRelative.low > -100 && widenedRelative.low < -95 && widenedRelative.high > -40, "\(widenedRelative)")
        let allGone = Bootstrap.Estimate(baseline: 10, candidate: 1, change: -90, low: -100, high: -50)
        #expect(Bootstrap.expanded(allGone, units: 3, bounds: -100...Double.greatestFiniteMagnitude).low == -100)
    }

    /// A relative change widened on the log of the ratio: the same runs judged the other way round
    /// give the mirrored interval (ratio r → 1/r), so an A/A is as likely to be called "improved" as
    /// "regressed". Linear widening around the percentage did not: −47 % [−70, −30] one way round is
    /// +89 % [+43, +233] the other, and × 2.69 left the first clear of −10 % but not the second of +10 %.
    @Test(arguments: [(-47.0, -70.0, -30.0), (25.0, 5.0, 60.0), (3.0, -12.0, 20.0)])
    func aWidenedRelativeIntervalMirrorsWhenTheSidesSwap(change: Double, low: Double, high: Double) {
        func swapped(_ percent: Double) -> Double { (1 / (1 + percent / 100) - 1) * 100 }
        let bounds = -100...Double.greatestFiniteMagnitude
        let oneWay = Bootstrap.expanded(Bootstrap.Estimate(baseline: 1, candidate: 1, change: change, low: low, high: high), units: 3, bounds: bounds)
        let otherWay = Bootstrap.expanded(
            Bootstrap.Estimate(baseline: 1, candidate: 1, change: swapped(change), low: swapped(high), high: swapped(low)), units: 3, bounds: bounds)
        #expect(abs(swapped(oneWay.low) - otherWay.high) < 1e-6 * max(1, abs(otherWay.high)), "\(oneWay) vs \(otherWay)")
        #expect(abs(swapped(oneWay.high) - otherWay.low) < 1e-6, "\(oneWay) vs \(otherWay)")
        // Whether it clears a ±10 % tolerance is the same question both ways round.
        #expect((oneWay.high < -10) == (otherWay.low > swapped(-10)))
    }

    /// Three rounds that all happen to be slower on one side but by amounts that vary (+15, +25,
    /// +60 %) are no evidence of a change: the plain percentile interval ([+15, +60]) lies beyond a
    /// 10 % tolerance; the expanded one does not. Rounds that agree (+48, +50, +52 %) still regress.
    @Test(arguments: [
        (candidate: [23.0, 25, 32], verdict: ChangeVerdict.noSignificantChange),
        (candidate: [29.6, 30, 30.4], verdict: .regressed),
    ])
    func threeRoundsMustAgreeToRegress(candidate: [Double], verdict: ChangeVerdict) throws {
        let base = [20.0, 20, 20]
        let plain = try #require(Bootstrap(resamples: 500, seed: 1).paired(baseline: base, candidate: candidate.map { $0 }, relative: true))
        #expect(plain.low > 10, "the plain interval [\(plain.low), \(plain.high)] alone would regress")
        let baseline = base.enumerated().map { Self.run("a\($0.offset)", [Self.unit([$0.element])]) }
        let candidates = candidate.enumerated().map { Self.run("b\($0.offset)", [Self.unit([$0.element])]) }
        let comparison = Comparison.make(
            baseline: baseline, candidate: candidates, bootstrap: Bootstrap(resamples: 500, seed: 1), force: true, paired: true)
        let row = try #require(comparison.rows.first { $0.metric.key == "login.connect.p50" })
        #expect(row.verdict == verdict, "\(row)")
    }
}
