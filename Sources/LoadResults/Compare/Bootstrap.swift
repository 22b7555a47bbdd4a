import Foundation

/// The bootstrap `compare` and `ab` use to put a confidence interval on a change.
///
/// Each side is a list of units (a run's intervals, or whole runs when three or more runs per side
/// are given). One resample draws, per side, as many units as it has, with replacement, merges them
/// and reads the statistic (a percentile of the merged histogram, or Σ numerator / Σ denominator);
/// the change is candidate vs baseline (relative % for latency and throughput, difference in
/// percentage points for rates). The 2.5 % and 97.5 % quantiles of the resampled changes are the
/// 95 % interval. Percentiles are never averaged: each resample merges histograms and reads the
/// percentile of the merge. `paired` resamples rounds of (baseline, candidate) values instead
/// (`xmppload ab`). Over few units (runs, rounds) the interval is widened by `expanded`. The
/// generator is seeded, so the same data give the same interval every time.
public struct Bootstrap: Sendable {
    /// The point estimates and the 95 % interval of the change.
    public struct Estimate: Sendable, Equatable {
        public var baseline: Double
        public var candidate: Double
        public var change: Double
        public var low: Double
        public var high: Double
        /// True when recordings, not units, were resampled (too few units on a side).
        public var ofRecordings = false
    }

    public var resamples: Int
    public var seed: UInt64

    public init(resamples: Int = 1000, seed: UInt64 = 1) {
        self.resamples = max(resamples, 1)
        self.seed = seed
    }

    /// Below this many units with recordings on a side, resampling units says little (one unit
    /// gives an interval of width 0): the recordings are resampled instead (`latencyOfRecordings`).
    public static let minimumUnits = 5

    /// Percentiles (milliseconds) of latency units; one estimate per requested percentile, or nil
    /// when a side has no recording. Units without recordings are left out of the resampling.
    ///
    /// `recordingsWhenFewUnits`: when a side has fewer than `minimumUnits` units with recordings,
    /// resample its recordings instead (`latencyOfRecordings`). Only for units that are intervals of
    /// one run; units that are whole runs are always resampled as runs (pass false), however few, so
    /// the interval carries run-to-run variation.
    public func latency(
        baseline: [BucketCounts], candidate: [BucketCounts], percentiles: [Double], recordingsWhenFewUnits: Bool = true
    ) -> [Estimate]? {
        let base = baseline.filter { !$0.isEmpty }
        let cand = candidate.filter { !$0.isEmpty }
        guard !base.isEmpty, !cand.isEmpty else { return nil }
        if recordingsWhenFewUnits && (base.count < Self.minimumUnits || cand.count < Self.minimumUnits) {
            return latencyOfRecordings(baseline: base, candidate: cand, percentiles: percentiles)
        }
        // One dense index over every value seen on either side: a resample adds counts into a flat
        // array and walks it once for all percentiles.
        var valueSet = Set<UInt64>()
        for unit in base + cand { valueSet.formUnion(unit.values) }
        let values = valueSet.sorted()
        var position: [UInt64: Int] = [:]
        for (index, value) in values.enumerated() { position[value] = index }
        func indexed(_ units: [BucketCounts]) -> [(indices: [Int], counts: [UInt64])] {
            units.map { unit in (unit.values.map { position[$0]! }, unit.counts) }
        }
        let baseUnits = indexed(base)
        let candUnits = indexed(cand)
        let order = percentiles.enumerated().sorted { $0.element < $1.element }
        var dense = [UInt64](repeating: 0, count: values.count)

        func read(_ units: [(indices: [Int], counts: [UInt64])], pick: [Int]) -> [Double] {
            for index in dense.indices { dense[index] = 0 }
            var total: UInt64 = 0
            for unitIndex in pick {
                let unit = units[unitIndex]
                for (slot, count) in zip(unit.indices, unit.counts) { dense[slot] += count }
                total += unit.counts.reduce(0, +)
            }
            var result = [Double](repeating: 0, count: percentiles.count)
            var running: UInt64 = 0
            var slot = 0
            for (original, percentile) in order {
                let target = percentile >= 100 ? total : BucketCounts.countAtPercentile(percentile, total: total)
                while slot < dense.count {
                    if dense[slot] > 0, running + dense[slot] >= target { break }
                    running += dense[slot]
                    slot += 1
                }
                result[original] = Double(values[min(slot, values.count - 1)]) / 1000
            }
            return result
        }

        let pointBase = read(baseUnits, pick: Array(baseUnits.indices))
        let pointCand = read(candUnits, pick: Array(candUnits.indices))
        var generator = ResampleGenerator(seed: seed)
        var changes = [[Double]](repeating: [], count: percentiles.count)
        for _ in 0..<resamples {
            let b = read(baseUnits, pick: Self.draw(baseUnits.count, &generator))
            let c = read(candUnits, pick: Self.draw(candUnits.count, &generator))
            for index in percentiles.indices where b[index] > 0 {
                changes[index].append(Self.relativeChange(b[index], c[index]))
            }
        }
        return percentiles.indices.map { index in
            Self.estimate(
                baseline: pointBase[index], candidate: pointCand[index],
                change: Self.relativeChange(pointBase[index], pointCand[index]), resampled: changes[index])
        }
    }

    /// The bootstrap over single recordings, for sides with too few units: each side's units are
    /// merged, and a resample of its N recordings is drawn through its order statistics — the
    /// percentile p of N draws is the merged distribution's quantile at a random level ~ Normal(p,
    /// p(1−p)/N) (the normal limit of the Beta law of an order statistic). It assumes independent
    /// recordings, which the interval bootstrap does not; `Estimate.ofRecordings` says it was used.
    public func latencyOfRecordings(baseline: [BucketCounts], candidate: [BucketCounts], percentiles: [Double]) -> [Estimate]? {
        let base = baseline.reduce(into: BucketCounts()) { $0.add($1) }
        let cand = candidate.reduce(into: BucketCounts()) { $0.add($1) }
        guard !base.isEmpty, !cand.isEmpty else { return nil }
        var generator = ResampleGenerator(seed: seed)
        func normal() -> Double {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &generator)
            let u2 = Double.random(in: 0..<1, using: &generator)
            return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        }
        func resampled(_ buckets: BucketCounts, _ percentile: Double) -> Double {
            let p = percentile / 100
            let n = Double(buckets.total)
            let level = min(max(p + normal() * (p * (1 - p) / n).squareRoot(), 0), 1)
            return Double(buckets.microseconds(atPercentile: level * 100)) / 1000
        }
        return percentiles.map { percentile in
            let b = Double(base.microseconds(atPercentile: percentile)) / 1000
            let c = Double(cand.microseconds(atPercentile: percentile)) / 1000
            var changes: [Double] = []
            changes.reserveCapacity(resamples)
            for _ in 0..<resamples {
                let rb = resampled(base, percentile)
                let rc = resampled(cand, percentile)
                if rb > 0 { changes.append(Self.relativeChange(rb, rc)) }
            }
            var estimate = Self.estimate(baseline: b, candidate: c, change: Self.relativeChange(b, c), resampled: changes)
            estimate.ofRecordings = true
            return estimate
        }
    }

    /// A ratio metric: Σ numerator / Σ denominator per side (× `scale`); `relative` changes are in
    /// %, else differences. Nil when a side's denominator is zero. `proportion`: the value is a share,
    /// capped at `scale` (a resample whose failures outnumber its starts — sessions that started in
    /// an interval not drawn — is at worst "all failed"), so a change lies in [−scale, +scale].
    public func ratio(
        baseline: [(numerator: Double, denominator: Double)], candidate: [(numerator: Double, denominator: Double)],
        scale: Double, relative: Bool, proportion: Bool = false
    ) -> Estimate? {
        func value(_ units: [(numerator: Double, denominator: Double)], _ pick: [Int]) -> Double? {
            var numerator = 0.0
            var denominator = 0.0
            for index in pick {
                numerator += units[index].numerator
                denominator += units[index].denominator
            }
            guard denominator > 0 else { return nil }
            let share = numerator / denominator
            return (proportion ? min(max(share, 0), 1) : share) * scale
        }
        guard !baseline.isEmpty, !candidate.isEmpty,
            let pointBase = value(baseline, Array(baseline.indices)),
            let pointCand = value(candidate, Array(candidate.indices))
        else { return nil }
        func change(_ b: Double, _ c: Double) -> Double? {
            if relative { return b > 0 ? Self.relativeChange(b, c) : (c == 0 ? 0 : nil) }
            return c - b
        }
        var generator = ResampleGenerator(seed: seed)
        var changes: [Double] = []
        for _ in 0..<resamples {
            let b = value(baseline, Self.draw(baseline.count, &generator))
            let c = value(candidate, Self.draw(candidate.count, &generator))
            if let b, let c, let delta = change(b, c) { changes.append(delta) }
        }
        guard let pointChange = change(pointBase, pointCand) else { return nil }
        return Self.estimate(baseline: pointBase, candidate: pointCand, change: pointChange, resampled: changes)
    }

    /// The paired bootstrap over rounds (`xmppload ab`, `compare --paired`): round r measured the
    /// baseline as `baseline[r]` and the candidate as `candidate[r]` (nil: not measured in that
    /// round; such rounds are left out). A resample draws rounds with replacement — the same rounds
    /// for both sides, so what drifted between rounds hits both — and the change is
    /// (Σ candidate − Σ baseline) / Σ baseline × 100 over the drawn rounds when `relative`, else the
    /// mean of candidate − baseline. Point values are the means over the rounds. Nil when no round
    /// measured both sides.
    public func paired(baseline: [Double?], candidate: [Double?], relative: Bool) -> Estimate? {
        let pairs = zip(baseline, candidate).compactMap { b, c in b.flatMap { b in c.map { (b, $0) } } }
        guard !pairs.isEmpty else { return nil }
        func change(_ pick: [Int]) -> Double? {
            var sumBase = 0.0
            var sumCand = 0.0
            for index in pick {
                sumBase += pairs[index].0
                sumCand += pairs[index].1
            }
            if relative { return sumBase > 0 ? (sumCand - sumBase) / sumBase * 100 : (sumCand == 0 ? 0 : nil) }
            return (sumCand - sumBase) / Double(pick.count)
        }
        let all = Array(pairs.indices)
        guard let point = change(all) else { return nil }
        var generator = ResampleGenerator(seed: seed)
        var changes: [Double] = []
        changes.reserveCapacity(resamples)
        for _ in 0..<resamples {
            if let delta = change(Self.draw(pairs.count, &generator)) { changes.append(delta) }
        }
        let count = Double(pairs.count)
        return Self.estimate(
            baseline: pairs.reduce(0) { $0 + $1.0 } / count, candidate: pairs.reduce(0) { $0 + $1.1 } / count,
            change: point, resampled: changes)
    }

    static func draw(_ count: Int, _ generator: inout ResampleGenerator) -> [Int] {
        (0..<count).map { _ in Int.random(in: 0..<count, using: &generator) }
    }

    static func relativeChange(_ baseline: Double, _ candidate: Double) -> Double {
        baseline > 0 ? (candidate - baseline) / baseline * 100 : 0
    }

    /// Student's t quantile at 0.975 for 1…30 degrees of freedom.
    static let t975: [Double] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ]

    /// How much a percentile bootstrap interval over `units` units (runs, rounds) must be widened to
    /// hold its 95 %: t(0.975, n−1) / 1.96 × √(n / (n−1)) — Hesterberg's "expanded percentile"
    /// correction. Over n units a bootstrap's spread is the plug-in one (divided by n, not n−1) and
    /// its quantiles are normal, not Student's, so with 3 runs the plain interval holds the truth
    /// far less often than 95 %: an A/A whose three runs all happened to be slower on one side was
    /// called a regression. 2.69 for 3 units, 1.58 for 5, 1.22 for 10; 1 for none or one.
    public static func expansion(units: Int) -> Double {
        guard units >= 2 else { return 1 }
        let df = units - 1
        let t = df <= t975.count ? t975[df - 1] : 1.96 + 2.37 / Double(df)
        return t / 1.96 * (Double(units) / Double(df)).squareRoot()
    }

    /// The estimate with its interval widened by `expansion(units:)` around the point change, and
    /// kept within `bounds` (a change cannot pass −100 % or ±100 pp).
    ///
    /// A relative change (`bounds` open above: −100 % … +∞) is widened on the log of the ratio
    /// candidate / baseline, not on the percentage itself, so that swapping the sides mirrors the
    /// interval: widened linearly, a −47 % change's interval could stay clear of a 10 % tolerance while
    /// the same runs the other way round (+89 %) did not (docs/COMPARE.md, A/A counted both ways: 3 vs 3
    /// flagged "improved" 6 of 80 times and "regressed" never). Differences in percentage points
    /// (rates) are symmetric already and widen linearly.
    public static func expanded(_ estimate: Estimate, units: Int, bounds: ClosedRange<Double>) -> Estimate {
        let factor = expansion(units: units)
        var result = estimate
        if bounds.upperBound == .greatestFiniteMagnitude {
            func log(_ percent: Double) -> Double? { 1 + percent / 100 > 0 ? Foundation.log(1 + percent / 100) : nil }
            func percent(_ logRatio: Double) -> Double { (exp(logRatio) - 1) * 100 }
            guard let point = log(estimate.change) else {
                result.low = bounds.lowerBound
                return result
            }
            if let low = log(estimate.low) {
                result.low = max(percent(point - factor * (point - low)), bounds.lowerBound)
            } else {
                result.low = bounds.lowerBound
            }
            if let high = log(estimate.high) {
                result.high = min(percent(point + factor * (high - point)), bounds.upperBound)
            } else {
                result.high = bounds.lowerBound
            }
            return result
        }
        result.low = min(max(estimate.change - factor * (estimate.change - estimate.low), bounds.lowerBound), bounds.upperBound)
        result.high = max(min(estimate.change + factor * (estimate.high - estimate.change), bounds.upperBound), bounds.lowerBound)
        return result
    }

    static func estimate(baseline: Double, candidate: Double, change: Double, resampled: [Double]) -> Estimate {
        guard !resampled.isEmpty else { return Estimate(baseline: baseline, candidate: candidate, change: change, low: change, high: change) }
        let sorted = resampled.sorted()
        return Estimate(
            baseline: baseline, candidate: candidate, change: change,
            low: quantile(sorted, 0.025), high: quantile(sorted, 0.975))
    }

    /// Linear interpolation between the closest ranks of an ascending array.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Int(position.rounded(.up))
        let weight = position - Double(lower)
        return sorted[lower] * (1 - weight) + sorted[upper] * weight
    }
}
