import Foundation
import LoadProfile
import NIOCore
import NIOPosix
import SessionCore
import Synchronization
import Testing
import XMPPCore

@testable import LoadEngine

// Name resolution off the event loops: at start, on the refresh interval, and for resumption locations.

/// Endpoint names resolved before the run (a name that does not resolve fails it, named), again on
/// an interval (changed addresses swapped in as one set, failed lookups keeping the last address)
/// and for XEP-0198 resumption locations (off the loop, once per location). Every resolver here is a
/// table: no DNS query leaves the machine.
@Suite struct EndpointResolutionTests {
    struct NoSuchHost: Error, CustomStringConvertible {
        let host: String
        var description: String { "no such host \(host)" }
    }

    /// A resolver that answers from `table` (host → IP literal; absent: no such host) and counts its calls.
    final class TableResolver: Sendable {
        let table: Mutex<[String: String]>
        let calls = Mutex<[String]>([])

        init(_ table: [String: String]) {
            self.table = Mutex(table)
        }

        var resolver: EndpointResolver {
            EndpointResolver { host, port in
                self.calls.withLock { $0.append(host) }
                if let literal = EndpointResolver.literal(host, port: port) { return literal }
                guard let ip = self.table.withLock({ $0[host] }) else { throw NoSuchHost(host: host) }
                return try SocketAddress(ipAddress: ip, port: port)
            }
        }

        func answer(_ host: String, with ip: String?) {
            table.withLock { $0[host] = ip }
        }
    }

    /// A value several threads share in a test.
    final class Shared<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        var value: Value { mutex.withLock { $0 } }
        func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
    }

    static func ip(_ address: SocketAddress) -> String? { address.ipAddress }

    // MARK: - At start

    @Test func everyNameThatDoesNotResolveFailsTheRunNamedAtOnce() async throws {
        var configuration = RunConfiguration(
            host: "xmpp-a.test", port: 5222, domain: "load.test", accounts: 1...2, password: "p", outputDirectory: "/tmp/unused")
        configuration.endpoints = [
            WeightedEndpoint(host: "xmpp-a.test", port: 5222), WeightedEndpoint(host: "gone.test", port: 5222),
            WeightedEndpoint(host: "127.0.0.3", port: 5223),
        ]
        let names = TableResolver(["xmpp-a.test": "127.0.0.2"])
        await #expect(throws: EndpointResolutionError.self) {
            _ = try await RunEnvironment.resolveEndpointsOffLoop(of: configuration, using: names.resolver)
        }
        do {
            _ = try await RunEnvironment.resolveEndpointsOffLoop(of: configuration, using: names.resolver)
        } catch let error as EndpointResolutionError {
            #expect(error.unresolved.map(\.endpoint) == ["gone.test:5222"])
            #expect(error.description.contains("gone.test:5222 (no such host gone.test)"), "\(error)")
        }
        names.answer("gone.test", with: "127.0.0.4")
        let addresses = try await RunEnvironment.resolveEndpointsOffLoop(of: configuration, using: names.resolver)
        #expect(addresses.map(Self.ip) == ["127.0.0.2", "127.0.0.4", "127.0.0.3"])
        #expect(addresses.map(\.port) == [5222, 5222, 5223])
    }

    // MARK: - Refresh

    /// One refresh round: what DNS answers now, what the set holds after it.
    struct RefreshRow: CustomTestStringConvertible, Sendable {
        let name: String
        /// host → IP answered in this round (absent: the lookup fails).
        let answers: [String: String]
        let changed: [Int]
        let failed: [Int]
        let after: [String]
        var testDescription: String { name }
    }

    /// Endpoints: a.test (127.0.0.2), b.test (127.0.0.3) and the literal 127.0.0.9, never looked up.
    static let refreshRows: [RefreshRow] = [
        RefreshRow(
            name: "nothing changed", answers: ["a.test": "127.0.0.2", "b.test": "127.0.0.3"], changed: [], failed: [],
            after: ["127.0.0.2", "127.0.0.3", "127.0.0.9"]),
        RefreshRow(
            name: "one name moved", answers: ["a.test": "127.0.0.2", "b.test": "127.0.0.7"], changed: [1], failed: [],
            after: ["127.0.0.2", "127.0.0.7", "127.0.0.9"]),
        RefreshRow(
            name: "both moved", answers: ["a.test": "127.0.0.5", "b.test": "127.0.0.6"], changed: [0, 1], failed: [],
            after: ["127.0.0.5", "127.0.0.6", "127.0.0.9"]),
        RefreshRow(
            name: "a lookup fails: its address stays", answers: ["b.test": "127.0.0.8"], changed: [1], failed: [0],
            after: ["127.0.0.2", "127.0.0.8", "127.0.0.9"]),
        RefreshRow(name: "every lookup fails", answers: [:], changed: [], failed: [0, 1], after: ["127.0.0.2", "127.0.0.3", "127.0.0.9"]),
    ]

    @Test(arguments: refreshRows)
    func aRefreshRoundSwapsInWhatChangedAndKeepsWhatFailed(row: RefreshRow) throws {
        let endpoints = [
            WeightedEndpoint(host: "a.test", port: 5222), WeightedEndpoint(host: "b.test", port: 5222),
            WeightedEndpoint(host: "127.0.0.9", port: 5222),
        ]
        let resolved = ResolvedEndpoints(
            endpoints: endpoints, addresses: try ["127.0.0.2", "127.0.0.3", "127.0.0.9"].map { try SocketAddress(ipAddress: $0, port: 5222) })
        var loopCopy = ResolvedEndpoints.LoopCopy(resolved)
        let names = TableResolver(row.answers)
        let round = EndpointRefresh.refresh(resolved, using: names.resolver)
        #expect(round == EndpointRefresh.Round(changed: row.changed, failed: row.failed))
        #expect(names.calls.withLock { $0 } == ["a.test", "b.test"], "IP literals are not looked up again")
        #expect(resolved.snapshot().addresses.map(Self.ip) == row.after)
        #expect(resolved.snapshot().generation == (row.changed.isEmpty ? 0 : 1), "a new generation only when something changed")
        // A loop's copy follows on its next connect.
        #expect((0..<3).map { Self.ip(loopCopy.address($0, in: resolved)) } == row.after)
    }

    @Test func aRunOfIPLiteralsOrWithoutIntervalStartsNoRefresh() throws {
        let literal = ResolvedEndpoints(
            endpoints: [WeightedEndpoint(host: "127.0.0.2", port: 5222)], addresses: [try SocketAddress(ipAddress: "127.0.0.2", port: 5222)])
        #expect(EndpointRefresh.start(literal, every: .seconds(300), using: .system) == nil)
        let named = ResolvedEndpoints(
            endpoints: [WeightedEndpoint(host: "localhost", port: 5222)], addresses: [try SocketAddress(ipAddress: "127.0.0.1", port: 5222)])
        #expect(EndpointRefresh.start(named, every: nil, using: .system) == nil)
        #expect(EndpointRefresh.start(named, every: .zero, using: .system) == nil)
    }

    /// The refresh task follows a DNS change on its own (off the loops), and stops when cancelled.
    @Test(.timeLimit(.minutes(1)))
    func theRefreshTaskFollowsADNSChange() async throws {
        let resolved = ResolvedEndpoints(
            endpoints: [WeightedEndpoint(host: "node.test", port: 5222)], addresses: [try SocketAddress(ipAddress: "127.0.0.2", port: 5222)])
        let names = TableResolver(["node.test": "127.0.0.2"])
        let task = try #require(EndpointRefresh.start(resolved, every: .milliseconds(20), using: names.resolver))
        defer { task.cancel() }
        names.answer("node.test", with: "127.0.0.6")
        // Poll with a deadline: the next round (20 ms apart) swaps the address in.
        let deadline = ContinuousClock.now + .seconds(20)
        while resolved.snapshot().addresses[0].ipAddress != "127.0.0.6", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(resolved.snapshot().addresses[0].ipAddress == "127.0.0.6")
        #expect(resolved.snapshot().generation == 1)
    }

    /// The real connector on a real loop: a connection opened after the set was swapped goes to the
    /// new address (two loopback listeners on one port stand for one name's old and new address).
    @Test(.timeLimit(.minutes(1)))
    func theConnectorOpensNewConnectionsAtTheSwappedAddress() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let accepted = Shared<[String]>([])
        func listen(on host: String, port: Int) async throws -> any Channel {
            try await ServerBootstrap(group: group).childChannelInitializer { channel in
                accepted.update { $0.append(host) }
                return channel.eventLoop.makeSucceededVoidFuture()
            }.bind(host: host, port: port).get()
        }
        let old = try await listen(on: "127.0.0.2", port: 0)
        let port = try #require(old.localAddress?.port)
        let new = try await listen(on: "127.0.0.3", port: port)
        let loop = group.next()
        let definition = try ProfileLoader.load(yaml: "name: idle\nlogin: {sasl: PLAIN, tls: none}\nsteps: [login, stay_online]\n", file: "idle.yaml")
        let configuration = RunConfiguration(
            host: "node.test", port: port, domain: "load.test", accounts: 1...2, password: "secret", tls: TLSMode.none,
            outputDirectory: "/tmp/unused")
        let environment = RunEnvironment(
            configuration: configuration, runID: "swap", server: try SocketAddress(ipAddress: "127.0.0.2", port: port), tls: nil,
            definition: definition, seed: 1, clockOrigin: .now())
        let context = try await loop.submit {
            NIOLoopBound(LoopContext(eventLoop: loop, environment: environment, loopIndex: 0), eventLoop: loop)
        }.get()
        func startSession(_ slot: Int) async throws {
            _ = environment.directory.claim(slot)
            try await loop.submit {
                let context = context.value
                let identity = SessionIdentity(
                    serial: slot, slot: slot, accountNumber: slot + 1, username: "user\(slot + 1)", bareJID: "user\(slot + 1)@load.test")
                let machine = SessionMachine(
                    identity: identity, script: environment.scripts[0], settings: environment.settings, host: context,
                    generator: SeededGenerator(seed: 1, stream: UInt64(slot)), intendedStart: context.now())
                context.start(VirtualUser(machine: machine, loop: context, phase: 0))
            }.get()
        }
        func waitForConnections(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while accepted.value.count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        }
        try await startSession(0)
        try await waitForConnections(1)
        #expect(accepted.value == ["127.0.0.2"])
        #expect(environment.resolvedEndpoints.replace(with: [try SocketAddress(ipAddress: "127.0.0.3", port: port)]) == [0])
        try await startSession(1)
        try await waitForConnections(2)
        #expect(accepted.value == ["127.0.0.2", "127.0.0.3"], "the second session connects to the new address")
        try await old.close()
        try await new.close()
        try await group.shutdownGracefully()
    }

    // MARK: - Resumption locations

    struct LocationRow: CustomTestStringConvertible, Sendable {
        let location: String
        let host: String?
        let port: Int?
        var testDescription: String { location }
    }

    static let locationRows: [LocationRow] = [
        LocationRow(location: "node2.test", host: "node2.test", port: 5222),
        LocationRow(location: "node2.test:5299", host: "node2.test", port: 5299),
        LocationRow(location: "127.0.0.3", host: "127.0.0.3", port: 5222),
        LocationRow(location: "[::1]:5223", host: "::1", port: 5223),
        LocationRow(location: "[::1]", host: "::1", port: 5222),
        LocationRow(location: "::1", host: "::1", port: 5222),
        LocationRow(location: "node2.test:notaport", host: nil, port: nil),
    ]

    @Test(arguments: locationRows)
    func aResumptionLocationParsesAsAServerEndpoint(row: LocationRow) {
        let endpoint = ResumeLocations.endpoint(of: row.location, defaultPort: 5222)
        #expect(endpoint?.host == row.host && endpoint?.port == row.port, "\(String(describing: endpoint))")
    }

    /// A name is looked up on the thread pool, never on the loop; the waiting sessions continue on
    /// the loop once it is known; a literal and a known name need no lookup; a name that does not
    /// resolve is remembered as nil.
    @Test(.timeLimit(.minutes(1)))
    func aResumptionNameIsLookedUpOffTheLoopOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let onLoop = Shared<[Bool]>([])
        let names = TableResolver(["node2.test": "127.0.0.5"])
        let observed = EndpointResolver { host, port in
            onLoop.update { $0.append(loop.inEventLoop) }
            return try names.resolver.resolve(host, port)
        }
        let locations = try await loop.submit { NIOLoopBound(ResumeLocations(eventLoop: loop, resolver: observed), eventLoop: loop) }.get()

        func lookUp(_ location: String) async throws -> (first: String, continued: Int, second: String) {
            let continued = Shared(0)
            let first = try await loop.submit {
                Self.describe(locations.value.address(of: location, defaultPort: 5222) { continued.update { $0 += 1 } })
            }.get()
            // A second session asks while the first lookup may still be under way: it waits too.
            let second = try await loop.submit {
                Self.describe(locations.value.address(of: location, defaultPort: 5222) { continued.update { $0 += 1 } })
            }.get()
            let deadline = ContinuousClock.now + .seconds(20)
            let waiting = [first, second].filter { $0 == "pending" }.count
            while continued.value < waiting, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            return (first, continued.value, second)
        }

        let name = try await lookUp("node2.test:5299")
        #expect(name.first == "pending" && name.continued == (name.second == "pending" ? 2 : 1))
        let known = try await loop.submit { Self.describe(locations.value.address(of: "node2.test:5299", defaultPort: 5222) {}) }.get()
        #expect(known == "127.0.0.5:5299")
        let literal = try await lookUp("127.0.0.7:5300")
        #expect(literal.first == "127.0.0.7:5300" && literal.continued == 0)
        let missing = try await lookUp("gone.test")
        #expect(missing.first == "pending" && missing.continued >= 1)
        let remembered = try await loop.submit { Self.describe(locations.value.address(of: "gone.test", defaultPort: 5222) {}) }.get()
        #expect(remembered == "nil")
        #expect(names.calls.withLock { $0 } == ["node2.test", "gone.test"], "each name looked up once")
        #expect(onLoop.value == [false, false], "never on the event loop")
        try await group.shutdownGracefully()
    }

    static func describe(_ lookup: ResumeLocations.Lookup) -> String {
        switch lookup {
        case .pending: return "pending"
        case .known(nil): return "nil"
        case .known(let address?): return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        }
    }
}
