import NIOCore
import NIOPosix

// Re-resolves the run's endpoint names on an interval during the run, off the event loops.

/// Follows DNS during a long run: every `RunConfiguration.endpointRefresh` (5 minutes by default)
/// each endpoint given by name is looked up again on NIO's blocking-work thread pool (never on an
/// event loop), and the addresses that changed replace the old ones in `ResolvedEndpoints` as one
/// set; connections opened afterwards go to the new addresses, established ones stay where they are.
///
/// A name that stops resolving mid-run keeps its last address (a DNS hiccup in hour seven of a soak
/// must not end it or move its sessions); only the start of the run fails on a name that does not
/// resolve (`EndpointResolution`). IP literals are never looked up again.
enum EndpointRefresh {
    /// What one round found.
    struct Round: Sendable, Equatable {
        /// Endpoint indexes whose address changed.
        var changed: [Int] = []
        /// Endpoint indexes whose lookup failed (they kept their address).
        var failed: [Int] = []
    }

    /// One round: looks up every endpoint given by name with `resolver` and swaps in what changed.
    /// Blocking: call it off the event loops (`start` runs it on the thread pool).
    static func refresh(_ endpoints: ResolvedEndpoints, using resolver: EndpointResolver) -> Round {
        var round = Round()
        var resolved: [SocketAddress?] = []
        for (index, endpoint) in endpoints.endpoints.enumerated() {
            if EndpointResolver.literal(endpoint.host, port: endpoint.port) != nil {
                resolved.append(nil)
                continue
            }
            do {
                resolved.append(try resolver.resolve(endpoint.host, endpoint.port))
            } catch {
                resolved.append(nil)
                round.failed.append(index)
            }
        }
        round.changed = endpoints.replace(with: resolved)
        return round
    }

    /// Whether any endpoint is given by name (a run of IP literals has nothing to follow).
    static func hasNames(_ endpoints: ResolvedEndpoints) -> Bool {
        endpoints.endpoints.contains { EndpointResolver.literal($0.host, port: $0.port) == nil }
    }

    /// Starts refreshing every `interval` until the returned task is cancelled; nil when there is
    /// nothing to follow (no interval, or no endpoint given by name). `rounds` hears each round.
    static func start(
        _ endpoints: ResolvedEndpoints, every interval: Duration?, using resolver: EndpointResolver,
        rounds: @escaping @Sendable (Round) -> Void = { _ in }
    ) -> Task<Void, Never>? {
        guard let interval, interval > .zero, hasNames(endpoints) else { return nil }
        return Task {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                    rounds(try await NIOThreadPool.singleton.runIfActive { refresh(endpoints, using: resolver) })
                } catch {
                    return  // cancelled, or the thread pool is shutting down with the process
                }
            }
        }
    }
}
