import LoadProfile
import LoadResults
import NIOCore

/// Resolves every endpoint of a run to a socket address once, before the run starts, and fails the
/// run when any does not resolve (instead of sending its sessions elsewhere).
enum EndpointResolution {
    /// The addresses of `endpoints`, in order. Throws one error naming *every* endpoint that did not
    /// resolve, with the resolver's reason. `resolve` is the name lookup (getaddrinfo by default;
    /// tests inject one, so they never query a DNS server off this machine).
    static func addresses(
        of endpoints: [WeightedEndpoint],
        using resolve: (String, Int) throws -> SocketAddress = { try SocketAddress.makeAddressResolvingHost($0, port: $1) }
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
}

/// Some of the run's server endpoints (`--server`, `XMPPLOAD_SERVERS`, DNS SRV targets) did not
/// resolve to an address; the run does not start (the CLI exits 1).
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
