import LoadProfile
import LoadResults
import NIOCore
import SessionCore
import Testing

@testable import LoadEngine

#if canImport(Glibc)
import Glibc
#endif

/// Runs with several endpoints: every endpoint must resolve before the run starts (one error names
/// all that do not), sessions know their node, the Prometheus exposition gets a bounded `node` label,
/// and the generator-limit errors keep their typed kinds, which the hints key on.
@Suite struct NodeExpositionTests {
    static let a = "127.0.0.2:5222"
    static let b = "127.0.0.3:5222"

    /// Node figures of two nodes: 100 logins on A (1…100 ms), errors on B, 3 messages A→B.
    static func twoNodes() -> NodeFigures {
        var nodeA = NodeFigures.Node()
        var login = LatencyHistogram()
        for ms in 1...100 { login.record(nanoseconds: UInt64(ms) * 1_000_000) }
        nodeA.latency["login"] = login
        var nodeB = NodeFigures.Node()
        nodeB.errors["connect-refused"] = 2
        var cell = LatencyHistogram()
        for _ in 0..<3 { cell.record(nanoseconds: 4_000_000) }
        return NodeFigures(nodes: [a: nodeA, b: nodeB], messages: [a: [b: cell]])
    }

    @Test(arguments: [
        "xmppload_node_login_seconds{node=\"127.0.0.2:5222\",quantile=\"0.5\",window=\"interval\"} 0.050015",
        "xmppload_node_login_count{node=\"127.0.0.2:5222\",window=\"run\"} 100.0",
        "xmppload_node_errors_total{node=\"127.0.0.3:5222\",kind=\"connect-refused\"} 2",
        "xmppload_node_message_count{node=\"127.0.0.2:5222\",receiver_node=\"127.0.0.3:5222\",window=\"run\"} 3.0",
    ])
    func nodeSeriesAreExposed(line: String) {
        let lines = PrometheusExpositionTests.exposition(withNodes: true).split(separator: "\n")
        #expect(lines.contains { $0 == line }, "\(lines.filter { $0.hasPrefix(line.prefix(30)) })")
    }

    @Test func aSingleServerRunExposesNoNodeSeries() {
        #expect(!PrometheusExpositionTests.exposition().contains("xmppload_node_"))
    }

    @Test func everyUnresolvableEndpointIsNamedInOneError() throws {
        let endpoints = [
            WeightedEndpoint(host: "127.0.0.2", port: 5222), WeightedEndpoint(host: "nope.example", port: 5222),
            WeightedEndpoint(host: "::1", port: 5223), WeightedEndpoint(host: "gone.example", port: 5269),
        ]
        struct NoSuchHost: Error, CustomStringConvertible {
            var description: String { "no such host" }
        }
        // A resolver that knows only IP literals: no DNS query leaves this machine.
        let resolve: (String, Int) throws -> SocketAddress = { host, port in
            guard let address = try? SocketAddress(ipAddress: host, port: port) else { throw NoSuchHost() }
            return address
        }
        #expect(throws: EndpointResolutionError.self) { try EndpointResolution.addresses(of: endpoints, using: resolve) }
        do {
            _ = try EndpointResolution.addresses(of: endpoints, using: resolve)
        } catch {
            #expect(error.unresolved.map(\.endpoint) == ["nope.example:5222", "gone.example:5269"])
            #expect(error.total == 4)
            #expect(error.description.hasPrefix("2 of 4 server endpoint(s) do not resolve: nope.example:5222 (no such host); gone.example:5269"))
        }
        let good = try EndpointResolution.addresses(of: [endpoints[0], endpoints[2]], using: resolve)
        #expect(good.map(\.port) == [5222, 5223])
    }

    @Test func theSystemResolverResolvesLoopbackNamesAndTheEnvironmentNamesEachNode() throws {
        var configuration = RunConfiguration(
            host: "127.0.0.2", port: 5222, domain: "load.test", accounts: 1...10, password: "secret",
            outputDirectory: "/tmp/unused")
        configuration.endpoints = [
            WeightedEndpoint(host: "127.0.0.2", port: 5222, weight: 2), WeightedEndpoint(host: "localhost", port: 5223),
        ]
        let addresses = try RunEnvironment.resolveEndpoints(of: configuration)
        #expect(addresses.count == 2 && addresses[1].port == 5223)
        let definition = try ProfileLoader.load(yaml: "name: t\nsteps: [login, stay_online]\n", file: "t.yaml")
        let environment = RunEnvironment(
            configuration: configuration, runID: "r", server: addresses[0], endpointAddresses: addresses, tls: nil,
            definition: definition, seed: 1, clockOrigin: .now())
        #expect(environment.nodes.map(\.label) == ["127.0.0.2:5222", "localhost:5223"])
        #expect(environment.registry.nodeLabels == ["127.0.0.2:5222", "localhost:5223"])
        // Weights 2:1 → arrivals 0,1,2 go to a, b, a (smooth round robin) — each session knows its node.
        #expect(
            (0..<3).map { environment.node(ofEndpoint: environment.endpoint(forArrival: $0))?.label } == [
                "127.0.0.2:5222", "localhost:5223", "127.0.0.2:5222",
            ])

        configuration.endpoints = []
        let single = RunEnvironment(
            configuration: configuration, runID: "r", server: addresses[0], tls: nil, definition: definition, seed: 1,
            clockOrigin: .now())
        #expect(single.nodes.isEmpty && single.node(ofEndpoint: 0) == nil && single.registry.nodeLabels.isEmpty)
    }

    /// errno → typed failure → the kind `ConnectionHint` keys on.
    @Test(arguments: [
        (EADDRNOTAVAIL, ConnectionHint.addressNotAvailable),
        (EADDRINUSE, ConnectionHint.addressNotAvailable),
        (EMFILE, ConnectionHint.descriptorsExhausted),
        (ENFILE, ConnectionHint.descriptorsExhausted),
        (ECONNREFUSED, "connect-refused"),
    ])
    func generatorLimitErrorsStayTypedAndCarryAHint(code: Int32, kind: String) {
        let failure = ConnectionFailure(errno: code)
        #expect(failure.kind == kind)
        #expect(ConnectionFailure(IOError(errnoCode: code, reason: "connect")) == failure)
        #expect(SessionError.connection(failure).kind == kind)
        let hints = ConnectionHint.hints(errors: [kind: 1], limits: .init(soft: 20_000, hard: 20_000))
        #expect(hints.count == (kind == "connect-refused" ? 0 : 1))
    }
}
