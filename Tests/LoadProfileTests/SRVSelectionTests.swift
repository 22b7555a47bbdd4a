import Testing

@testable import LoadProfile

/// RFC 2782's order of SRV targets: by priority, weighted random within one, "." means no service.
@Suite struct SRVSelectionTests {
    static func record(_ priority: UInt16, _ weight: UInt16, _ target: String) -> SRVRecord {
        SRVRecord(priority: priority, weight: weight, port: 5222, target: target)
    }

    @Test func lowerPriorityComesFirstWhateverTheWeights() {
        let records = [Self.record(20, 100, "c"), Self.record(10, 1, "a"), Self.record(10, 0, "b"), Self.record(30, 5, "d")]
        for seed in UInt64(0)..<50 {
            var generator = SeededGenerator(seed: seed)
            let order = SRVSelection.order(records, using: &generator).map(\.target)
            #expect(Set(order.prefix(2)) == ["a", "b"])
            #expect(Array(order.suffix(2)) == ["c", "d"])
        }
    }

    /// Within a priority the first pick follows the weights: 3:1 over 4,000 seeded orders.
    @Test func firstPickFollowsTheWeights() {
        let records = [Self.record(0, 30, "heavy"), Self.record(0, 10, "light")]
        var generator = SeededGenerator(seed: 42)
        var heavyFirst = 0
        for _ in 0..<4000 where SRVSelection.order(records, using: &generator)[0].target == "heavy" { heavyFirst += 1 }
        #expect((2850...3150).contains(heavyFirst), "\(heavyFirst) of 4000")
    }

    @Test func theSameSeedGivesTheSameOrder() {
        let records = (0..<8).map { Self.record(0, UInt16($0 * 7 + 1), "t\($0)") }
        var first = SeededGenerator(seed: 7)
        var second = SeededGenerator(seed: 7)
        #expect(SRVSelection.order(records, using: &first) == SRVSelection.order(records, using: &second))
    }

    @Test func everyRecordAppearsOnceEvenWithWeightZero() {
        let records = [Self.record(0, 0, "z1"), Self.record(0, 0, "z2"), Self.record(0, 5, "w")]
        var generator = SeededGenerator(seed: 1)
        #expect(SRVSelection.order(records, using: &generator).map(\.target).sorted() == ["w", "z1", "z2"])
    }

    @Test func aLoneDotMeansNoService() {
        var generator = SeededGenerator(seed: 1)
        #expect(SRVSelection.order([Self.record(0, 0, ".")], using: &generator).isEmpty)
        #expect(SRVSelection.isNoService([Self.record(0, 0, ".")]))
        #expect(!SRVSelection.isNoService([Self.record(0, 0, "."), Self.record(0, 0, "a")]))
        #expect(SRVSelection.order([Self.record(0, 0, "."), Self.record(1, 0, "a")], using: &generator).map(\.target) == ["a"])
    }
}
