import Testing

@testable import LoadProfile

/// `--server HOST:PORT[,weight=W]` parsing and the deterministic spread of arrivals over endpoints.
@Suite struct WeightedEndpointsTests {
    @Test(arguments: [
        ("127.0.0.2:5222", WeightedEndpoint(host: "127.0.0.2", port: 5222)),
        ("a.example:5223,weight=3", WeightedEndpoint(host: "a.example", port: 5223, weight: 3)),
        ("[::1]:5222, weight=10000", WeightedEndpoint(host: "::1", port: 5222, weight: 10_000)),
    ])
    func parsesEndpoints(text: String, expected: WeightedEndpoint) throws {
        #expect(try WeightedEndpoint.parse(text).get() == expected)
    }

    @Test(arguments: [
        ("127.0.0.2", "is not HOST:PORT"),
        ("127.0.0.2:0", "is not HOST:PORT"),
        (":5222", "has no valid host"),
        ("::1:5222", "write an IPv6 host in brackets"),
        ("h:5222,weight=0", "weight must be an integer 1...10000, got '0'"),
        ("h:5222,weight=x", "weight must be an integer"),
        ("h:5222,prio=1", "unknown option 'prio=1'"),
        ("h:5222,weight=2,weight=3", "the weight is given more than once"),
    ])
    func rejectsMalformedEndpoints(text: String, message: String) {
        guard case .failure(let error) = WeightedEndpoint.parse(text) else {
            Issue.record("'\(text)' parsed")
            return
        }
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// Rows: weights → one cycle of picks (indexes into the endpoints), interleaved.
    @Test(arguments: [
        ([1], [0]),
        ([1, 1], [0, 1]),
        ([3, 1], [0, 0, 1, 0]),
        ([2, 4], [1, 0, 1]),  // reduced by the gcd to 1:2
        ([5, 1, 1], [0, 0, 1, 0, 2, 0, 0]),
        ([0, 0], [0, 1]),  // SRV weights all 0: even
        ([0, 2], [1]),  // weight 0 beside a positive one gets nothing
    ])
    func oneCycleFollowsTheWeights(weights: [Int], cycle: [Int]) throws {
        let endpoints = weights.enumerated().map { WeightedEndpoint(host: "h\($0.offset)", port: 5222, weight: $0.element) }
        let spread = try #require(WeightedEndpoints(endpoints))
        #expect(spread.cycle == cycle)
        for (arrival, index) in cycle.enumerated() {
            #expect(spread.endpoint(forArrival: arrival) == endpoints[index])
            #expect(spread.endpoint(forArrival: arrival + 10 * cycle.count) == endpoints[index])
        }
    }

    @Test func onlyThePreferredPriorityReceivesSessions() throws {
        let endpoints = [
            WeightedEndpoint(host: "backup", port: 1, weight: 50, priority: 10),
            WeightedEndpoint(host: "a", port: 1, weight: 1, priority: 0),
            WeightedEndpoint(host: "b", port: 1, weight: 1, priority: 0),
            WeightedEndpoint(host: "last", port: 1, weight: 1, priority: 20),
        ]
        let spread = try #require(WeightedEndpoints(endpoints))
        #expect(spread.preferred.map(\.host) == ["a", "b"])
        #expect(spread.fallbacks.map(\.host) == ["backup", "last"])
        #expect(Set((0..<100).map { spread.endpoint(forArrival: $0).host }) == ["a", "b"])
        #expect(WeightedEndpoints([]) == nil)
    }

    /// SRV weights up to 65,535 are apportioned to a cycle of at most 4096 slots, keeping the shares.
    @Test func largeWeightsAreApportioned() throws {
        let endpoints = [65_535, 20_000, 1].enumerated().map { WeightedEndpoint(host: "h\($0.offset)", port: 1, weight: $0.element) }
        let spread = try #require(WeightedEndpoints(endpoints))
        #expect(spread.cycle.count == WeightedEndpoints.maximumCycle)
        let counts = (0..<3).map { index in spread.cycle.filter { $0 == index }.count }
        #expect(counts[2] == 1)
        #expect(abs(Double(counts[0]) / Double(counts[1]) - 65_535.0 / 20_000) < 0.01)
    }

    @Test func negativeArrivalIndexesStayInRange() throws {
        let spread = try #require(WeightedEndpoints([WeightedEndpoint(host: "a", port: 1, weight: 2), WeightedEndpoint(host: "b", port: 1)]))
        #expect(["a", "b"].contains(spread.endpoint(forArrival: -7).host))
    }
}
