import LoadProfile
import LoadResults
import NIOCore
import NIOPosix

/// A name lookup: a host (name or IP literal) and port to one socket address, blocking (getaddrinfo
/// for `system`). Run only off the event loops (`EndpointResolution.addressesOffLoop`,
/// `EndpointRefresh`, `ResumeLocations`); tests inject a table, so no DNS query leaves the machine.
struct EndpointResolver: Sendable {
    let resolve: @Sendable (String, Int) throws -> SocketAddress

    /// getaddrinfo; the first address it returns.
    static let system = EndpointResolver { try SocketAddress.makeAddressResolvingHost($0, port: $1) }

    /// `host` is an IP literal: its address, with no lookup (nil for a name).
    static func literal(_ host: String, port: Int) -> SocketAddress? {
        try? SocketAddress(ipAddress: host, port: port)
    }
}

/// Resolves every endpoint of a run to a socket address once, before the run starts (off the event
/// loops), and fails the run when any does not resolve (instead of sending its sessions elsewhere).
enum EndpointResolution {
    /// The addresses of `endpoints`, in order. Throws one error naming *every* endpoint that did not
    /// resolve, with the resolver's reason. `resolve` is the name lookup (getaddrinfo by default;
    /// tests inject one, so they never query a DNS server off this machine). Blocking.
    static func addresses(
        of endpoints: [WeightedEndpoint],
        using resolve: (String, Int) throws -> SocketAddress = EndpointResolver.system.resolve
    ) throws(EndpointResolutionError) -> [SocketAddress] {
        var addresses: [SocketAddress] = []
        var unresolved: [EndpointResolutionError.Unresolved] = []
        for endpoint in endpoints {
            do {
                addresses.append(try resolve(endpoint.host, endpoint.port))
            } catch {
                unresolved.append(.init(endpoint: ServerNodeLabel.of(endpoint), reason: "\(error)"))
            }
        }
        guard unresolved.isEmpty else { throw EndpointResolutionError(unresolved: unresolved, total: endpoints.count) }
        return addresses
    }

    /// `addresses(of:using:)` on NIO's shared blocking-work thread pool: neither an event loop nor
    /// the task's own thread waits on DNS.
    static func addressesOffLoop(of endpoints: [WeightedEndpoint], using resolver: EndpointResolver) async throws -> [SocketAddress] {
        try await NIOThreadPool.singleton.runIfActive { try addresses(of: endpoints, using: resolver.resolve) }
    }
}

/// Some of the run's server endpoints (`--server`, `XMPPLOAD_SERVERS`, DNS SRV targets) did not
/// resolve to an address; the run does not start.
public struct EndpointResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One endpoint that did not resolve: its `host:port` and the resolver's reason.
    public struct Unresolved: Sendable, Equatable {
        public let endpoint: String
        public let reason: String
    }

    /// Every endpoint that did not resolve, in the order given.
    public let unresolved: [Unresolved]
    /// How many endpoints the run has.
    public let total: Int

    public var description: String {
        let list = unresolved.map { "\($0.endpoint) (\($0.reason))" }.joined(separator: "; ")
        return "\(unresolved.count) of \(total) server endpoint(s) do not resolve: \(list). "
            + "Check the names given with --server, XMPPLOAD_SERVERS or --server-env."
    }
}

/// The label every result uses for an endpoint (`ServerNode.label`).
enum ServerNodeLabel {
    static func of(_ endpoint: WeightedEndpoint) -> String {
        ServerNode.label(host: endpoint.host, port: endpoint.port)
    }
}
