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

/// RFC 2782's fallback order as a session walks it (`SRVFallbackOrder`): its first choice, the rest
/// of the preferred priority, then each later priority, each endpoint once; later tiers entered at
/// their own weighted spread.
@Suite struct SRVFallbackOrderTests {
    /// Two preferred nodes 3:1 (positions 0, 1), two backups 2:1 at priority 10 (positions 2, 3) and
    /// a last resort at priority 20 (position 4), listed out of order as DNS may give them.
    static let endpoints = [
        WeightedEndpoint(host: "10.0.0.1", port: 5222, weight: 30, priority: 0),
        WeightedEndpoint(host: "10.0.0.2", port: 5222, weight: 10, priority: 0),
        WeightedEndpoint(host: "10.0.0.3", port: 5222, weight: 20, priority: 10),
        WeightedEndpoint(host: "10.0.0.4", port: 5222, weight: 10, priority: 10),
        WeightedEndpoint(host: "10.0.0.5", port: 5222, weight: 0, priority: 20),
    ]

    static func order(seed: UInt64 = 9) -> SRVFallbackOrder {
        var generator = SeededGenerator(seed: seed)
        return SRVFallbackOrder(endpoints, using: &generator)!
    }

    static func walk(_ order: SRVFallbackOrder, first: Int, arrival: Int) -> [Int] {
        var tries: [Int] = []
        var attempt = 0
        while let next = order.endpoint(attempt: attempt, first: first, arrival: arrival) {
            tries.append(next)
            attempt += 1
        }
        return tries
    }

    @Test func everySessionTriesEachEndpointOnceByPriority() {
        let order = Self.order()
        #expect(order.count == 5)
        #expect(order.tiers.map { Set($0) } == [[0, 1], [2, 3], [4]])
        let spread = WeightedEndpoints(Self.endpoints)!
        for arrival in 0..<200 {
            let first = spread.position(forArrival: arrival)
            let tries = Self.walk(order, first: first, arrival: arrival)
            #expect(tries.count == 5)
            #expect(tries[0] == first)
            #expect(Set(tries.prefix(2)) == [0, 1])
            #expect(Set(tries[2...3]) == [2, 3])
            #expect(tries[4] == 4)
        }
    }

    /// Sessions that fall back into priority 10 spread 2:1 by weight over it (every cycle of 3).
    @Test func fallbacksIntoALaterPrioritySpreadByWeight() {
        let order = Self.order()
        var entered: [Int: Int] = [:]
        for arrival in 0..<3000 { entered[order.endpoint(attempt: 2, first: 0, arrival: arrival)!, default: 0] += 1 }
        #expect(entered == [2: 2000, 3: 1000])
    }

    @Test func theFirstTryIsTheSessionsChoiceAndTheWalkEnds() {
        let order = Self.order()
        #expect(order.endpoint(attempt: 0, first: 1, arrival: 7) == 1)
        #expect(order.endpoint(attempt: 1, first: 1, arrival: 7) == 0)
        #expect(order.endpoint(attempt: 5, first: 1, arrival: 7) == nil)
        #expect(order.endpoint(attempt: 1, first: 99, arrival: 7) == nil)
    }

    /// The tiers' orders come from the generator: the same seed, the same walk for every arrival.
    @Test func theSameSeedGivesTheSameWalks() {
        let a = Self.order(seed: 3)
        let b = Self.order(seed: 3)
        #expect(a == b)
        for arrival in 0..<50 { #expect(Self.walk(a, first: 0, arrival: arrival) == Self.walk(b, first: 0, arrival: arrival)) }
    }

    @Test func oneEndpointHasNoFallbackAndNoneHasNoOrder() {
        var generator = SeededGenerator(seed: 1)
        let single = SRVFallbackOrder([Self.endpoints[0]], using: &generator)!
        #expect(single.endpoint(attempt: 1, first: 0, arrival: 0) == nil)
        #expect(SRVFallbackOrder([], using: &generator) == nil)
    }
}
