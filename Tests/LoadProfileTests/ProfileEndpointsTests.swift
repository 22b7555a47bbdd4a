import Testing

@testable import LoadProfile

/// The pure endpoint-for-profile choice: a profile's sessions go to the run's endpoints of its
/// transport, by weight over each cycle, the same endpoint for the same run-wide arrival index.
@Suite struct ProfileEndpointsTests {
    static let endpoints = [
        "127.0.0.1:5222", "127.0.0.2:5222,weight=3", "ws://127.0.0.1:5280/xmpp-websocket",
        "http://127.0.0.1:5280/http-bind,weight=2", "ws://127.0.0.2:5280/xmpp-websocket,weight=2",
    ].map { try! WeightedEndpoint.parse($0).get() }
    static let profiles: [(name: String, transport: ProfileTransport)] = [
        ("any", .any), ("desktop", .tcp), ("web", .webSocket), ("mobile", .bosh),
    ]

    /// Per profile: the endpoints (indexes) it may use and how many picks each gets per cycle.
    @Test(arguments: [
        (1, [0: 1, 1: 3]),
        (2, [2: 1, 4: 2]),
        (3, [3: 1]),
        (0, [0: 1, 1: 3, 2: 1, 3: 2, 4: 2]),
    ])
    func weightsAreHonouredOverACycleAmongTheProfilesTransport(profile: Int, perCycle: [Int: Int]) throws {
        let spread = try ProfileEndpoints(endpoints: Self.endpoints, profiles: Self.profiles)
        let cycle = perCycle.values.reduce(0, +)
        for start in [0, 7 * cycle, 1_000_003 * cycle] {
            var counts: [Int: Int] = [:]
            for arrival in start..<(start + cycle) {
                counts[spread.endpoint(forProfile: profile, arrival: arrival), default: 0] += 1
            }
            #expect(counts == perCycle, "profile \(Self.profiles[profile].name) from arrival \(start)")
        }
    }

    @Test func theSameArrivalIndexGivesTheSameEndpoint() throws {
        let spread = try ProfileEndpoints(endpoints: Self.endpoints, profiles: Self.profiles)
        let again = try ProfileEndpoints(endpoints: Self.endpoints, profiles: Self.profiles)
        for profile in Self.profiles.indices {
            for arrival in [0, 1, 2, 5, 99, 12_345, Int.max, -3] {
                let first = spread.endpoint(forProfile: profile, arrival: arrival)
                #expect(again.endpoint(forProfile: profile, arrival: arrival) == first)
                #expect(Self.profiles[profile].transport.allows(Self.endpoints[first].transport))
            }
        }
    }

    /// `any` picks exactly what a run without transports picks, so existing runs do not move.
    @Test func anyPicksWhatTheWholeSpreadPicks() throws {
        let spread = try ProfileEndpoints(endpoints: Self.endpoints, profiles: Self.profiles)
        let whole = try #require(WeightedEndpoints(Self.endpoints))
        for arrival in 0..<100 {
            #expect(spread.endpoint(forProfile: 0, arrival: arrival) == whole.position(forArrival: arrival))
            #expect(Self.endpoints[whole.position(forArrival: arrival)] == whole.endpoint(forArrival: arrival))
        }
    }

    /// An endpoint listed twice counts twice and is told apart by its place.
    @Test func aDuplicateEndpointKeepsItsOwnPlace() throws {
        let twice = ["127.0.0.1:5222", "127.0.0.1:5222"].map { try! WeightedEndpoint.parse($0).get() }
        let spread = try ProfileEndpoints(endpoints: twice, profiles: [("p", .tcp)])
        #expect((0..<4).map { spread.endpoint(forProfile: 0, arrival: $0) } == [0, 1, 0, 1])
    }

    @Test func aProfileWithoutAnEndpointOfItsTransportIsNamed() {
        let tcpOnly = Array(Self.endpoints.prefix(2))
        do {
            _ = try ProfileEndpoints(endpoints: tcpOnly, profiles: Self.profiles)
            Issue.record("a run without web endpoints accepted web profiles")
        } catch {
            #expect(error.missing.map(\.profile) == ["web", "mobile"])
            #expect(error.missing.map(\.index) == [2, 3])
            #expect(
                error.lines == [
                    "profile 'web' has transport: websocket but the run has no websocket endpoint (it has tcp): add one with --server ws://HOST:5280/xmpp-websocket or in `servers:`",
                    "profile 'mobile' has transport: bosh but the run has no bosh endpoint (it has tcp): add one with --server http://HOST:5280/http-bind or in `servers:`",
                ])
        }
    }

    /// Which endpoint transports each profile transport takes: tcp, ws, wss, http, https.
    @Test(arguments: [
        (ProfileTransport.any, [true, true, true, true, true]),
        (.tcp, [true, false, false, false, false]),
        (.webSocket, [false, true, true, false, false]),
        (.bosh, [false, false, false, true, true]),
    ])
    func transportsAllowTheirEndpoints(transport: ProfileTransport, allowed: [Bool]) {
        let kinds: [EndpointTransport] = [
            .tcp, .webSocket(secure: false, path: "/"), .webSocket(secure: true, path: "/ws"),
            .bosh(secure: false, path: "/"), .bosh(secure: true, path: "/http-bind"),
        ]
        #expect(kinds.map { transport.allows($0) } == allowed)
    }
}
