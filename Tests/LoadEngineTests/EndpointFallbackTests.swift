import LoadProfile
import NIOCore
import SessionCore
import Testing

@testable import LoadEngine

#if canImport(Glibc)
import Glibc
#endif

/// The fallback decision of a session whose connect failed (`EndpointFallback`, plain values) and the
/// order a run's environment builds for it: only connect-level failures go on to the next endpoint,
/// only runs of several plain TCP endpoints have an order, and the error reaches the session only
/// once every endpoint failed.
@Suite struct EndpointFallbackTests {
    static let endpoints = [
        WeightedEndpoint(host: "127.0.0.2", port: 5222, weight: 1, priority: 0),
        WeightedEndpoint(host: "127.0.0.1", port: 5223, weight: 1, priority: 10),
    ]

    static func order() -> SRVFallbackOrder {
        var generator = SeededGenerator(seed: 1)
        return SRVFallbackOrder(endpoints, using: &generator)!
    }

    @Test(arguments: [ConnectionFailure.refused, .timeout, .unreachable, .connectFailed])
    func connectLevelFailuresFallBack(failure: ConnectionFailure) {
        #expect(EndpointFallback.isConnectLevel(failure))
        #expect(EndpointFallback.next(after: failure, attempt: 0, first: 0, arrival: 0, order: Self.order()) == 1)
        // The second endpoint failed too: nothing left, the session hears the failure.
        #expect(EndpointFallback.next(after: failure, attempt: 1, first: 0, arrival: 0, order: Self.order()) == nil)
    }

    @Test(arguments: [
        ConnectionFailure.tls, .tlsCertificate(.expired), .reset, .closed, .descriptorsExhausted, .addressNotAvailable,
        .bootstrapWithoutSession, .httpStatus(503), .other,
    ])
    func otherFailuresDoNot(failure: ConnectionFailure) {
        #expect(!EndpointFallback.isConnectLevel(failure))
        #expect(EndpointFallback.next(after: failure, attempt: 0, first: 0, arrival: 0, order: Self.order()) == nil)
    }

    @Test func withoutAnOrderNothingFallsBack() {
        #expect(EndpointFallback.next(after: .refused, attempt: 0, first: 0, arrival: 0, order: nil) == nil)
    }

    /// Errno of a refused connect, as NIO reports it, is a connect-level failure.
    @Test func aRefusedConnectFromNIOFallsBack() {
        let failure = ConnectionFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(EndpointFallback.isConnectLevel(failure))
    }

    static func environment(_ endpoints: [WeightedEndpoint], fromDNS: Bool = true) throws -> RunEnvironment {
        var configuration = RunConfiguration(
            host: endpoints[0].host, port: endpoints[0].port, domain: "load.test", accounts: 1...10, password: "secret",
            outputDirectory: "/tmp/unused")
        configuration.endpoints = endpoints
        configuration.endpointsFromDNS = fromDNS
        let addresses = try EndpointResolution.addresses(of: endpoints) { try SocketAddress(ipAddress: $0, port: $1) }
        let definition = try ProfileLoader.load(yaml: "name: t\nsteps: [login, stay_online]\n", file: "t.yaml")
        return RunEnvironment(
            configuration: configuration, runID: "r", server: addresses[0], endpointAddresses: addresses, tls: nil,
            definition: definition, seed: 1, clockOrigin: .now())
    }

    @Test func aRunOfSeveralTCPEndpointsFallsBackInPriorityOrder() throws {
        let environment = try Self.environment(Self.endpoints)
        #expect(environment.endpointFallback?.tiers == [[0], [1]])
        for arrival in 0..<4 {
            let first = environment.endpoint(forArrival: arrival)
            #expect(first == 0)
            #expect(environment.fallbackEndpoint(after: .refused, attempt: 0, first: first, arrival: arrival) == 1)
            #expect(environment.fallbackEndpoint(after: .refused, attempt: 1, first: first, arrival: arrival) == nil)
            #expect(environment.fallbackEndpoint(after: .tls, attempt: 0, first: first, arrival: arrival) == nil)
        }
    }

    @Test func aSingleServerOrAWebRunHasNoOrder() throws {
        #expect(try Self.environment([Self.endpoints[0]]).endpointFallback == nil)
        let web = try Self.environment([
            Self.endpoints[0], WeightedEndpoint(host: "127.0.0.1", port: 5280, transport: .webSocket(secure: false, path: "/ws")),
        ])
        #expect(web.endpointFallback == nil)
    }

    /// Endpoints the user named (`--server`, `servers:`) never fall back: a dead node shows as its
    /// own errors instead of vanishing into the others.
    @Test func namedEndpointsDoNotFallBack() throws {
        #expect(try Self.environment(Self.endpoints, fromDNS: false).endpointFallback == nil)
    }
}
