import Foundation
import Testing

@testable import LoadProfile

/// Think-time distributions from large seeded samples: bounds, means, determinism.
@Suite struct ThinkTimeTests {
    static func sample(_ think: ThinkTime, count: Int = 20_000, seed: UInt64 = 42) -> [Double] {
        var generator = SeededGenerator(seed: seed, stream: 3)
        return (0..<count).map { _ in think.sample(using: &generator).seconds }
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    @Test func constantIsConstant() {
        #expect(Set(Self.sample(.constant(.milliseconds(250)), count: 100)) == [0.25])
    }

    @Test func uniformStaysInItsRangeWithTheRightMean() {
        let values = Self.sample(.uniform(.seconds(1), .seconds(3)))
        #expect(values.min()! >= 1 && values.max()! <= 3)
        #expect(abs(Self.mean(values) - 2) < 0.03)
        #expect(values.min()! < 1.01 && values.max()! > 2.99)
    }

    @Test func exponentialHasItsMeanAndRespectsTheCap() {
        let values = Self.sample(.exponential(mean: .seconds(2), max: nil))
        #expect(abs(Self.mean(values) - 2) < 0.08)
        #expect(values.min()! >= 0)
        let capped = Self.sample(.exponential(mean: .seconds(2), max: .seconds(3)))
        #expect(capped.max()! <= 3)
        // E[min(X, 3)] = 2 (1 − e^{−1.5}) ≈ 1.554
        #expect(abs(Self.mean(capped) - 1.554) < 0.05)
        #expect(abs(ThinkTime.exponential(mean: .seconds(2), max: .seconds(3)).mean.seconds - 1.554) < 0.001)
    }

    @Test func sameSeedSameSequenceOtherStreamOtherSequence() {
        let think = ThinkTime.uniform(.zero, .seconds(10))
        #expect(Self.sample(think, count: 50) == Self.sample(think, count: 50))
        var a = SeededGenerator(seed: 1, stream: 1)
        var b = SeededGenerator(seed: 1, stream: 2)
        #expect((0..<10).map { _ in a.next() } != (0..<10).map { _ in b.next() })
    }
}

extension ThinkTimeTests {
    /// The exponential tail of a 100-year mean (the longest duration a profile accepts) stays a valid
    /// Duration instead of trapping.
    @Test func exponentialTailOfTheLongestMeanDoesNotOverflow() {
        let think = ThinkTime.exponential(mean: .seconds(Int64(DurationText.maximumSeconds)), max: nil)
        var generator = SeededGenerator(seed: 7, stream: 0)
        let samples = (0..<10_000).map { _ in think.sample(using: &generator) }
        #expect(samples.allSatisfy { $0 >= .zero })
    }
}
