import Atomics
import LoadProfile
import NIOCore
import Synchronization

// The run's endpoint addresses as every event loop reads them, swapped as one set when DNS changes.

/// The address of each of the run's endpoints (in the order of `RunEnvironment`'s endpoint indexes),
/// resolved before the run and replaced, as one set, when a re-resolution (`EndpointRefresh`) finds a
/// name that now points elsewhere. Shared by every event loop.
///
/// Reading costs a loop one relaxed-acquire atomic load per connect (`LoopCopy`): the set itself is
/// copied under a lock only when its generation moved, i.e. once per loop per DNS change. A writer
/// replaces the whole set under the lock and bumps the generation inside it, so a reader never sees
/// half of a change.
final class ResolvedEndpoints: Sendable {
    /// One generation of the set: `addresses[i]` is endpoint `i`'s.
    struct Snapshot: Sendable {
        let generation: Int
        let addresses: [SocketAddress]
    }

    /// The names the addresses were resolved from (what a re-resolution looks up again).
    let endpoints: [WeightedEndpoint]
    private let generation = ManagedAtomic<Int>(0)
    private let current: Mutex<Snapshot>

    /// `addresses[i]` is `endpoints[i]`'s; the two have the same count.
    init(endpoints: [WeightedEndpoint], addresses: [SocketAddress]) {
        precondition(endpoints.count == addresses.count, "one address per endpoint")
        self.endpoints = endpoints
        current = Mutex(Snapshot(generation: 0, addresses: addresses))
    }

    /// Every endpoint's address now.
    func snapshot() -> Snapshot {
        current.withLock { $0 }
    }

    /// Replaces the addresses whose lookups succeeded (`resolved[i]` nil: endpoint `i` keeps its
    /// address) and returns the indexes whose address changed; a new generation only when one did.
    @discardableResult
    func replace(with resolved: [SocketAddress?]) -> [Int] {
        current.withLock { snapshot in
            var addresses = snapshot.addresses
            var changed: [Int] = []
            for (index, address) in zip(addresses.indices, resolved) {
                guard let address, address != addresses[index] else { continue }
                addresses[index] = address
                changed.append(index)
            }
            guard !changed.isEmpty else { return [] }
            snapshot = Snapshot(generation: snapshot.generation + 1, addresses: addresses)
            generation.store(snapshot.generation, ordering: .releasing)
            return changed
        }
    }

    /// One event loop's copy of the set, refreshed when the shared generation moved. Loop-bound (a
    /// plain value the loop's connector owns).
    struct LoopCopy {
        private var snapshot: Snapshot

        init(_ shared: ResolvedEndpoints) {
            snapshot = shared.snapshot()
        }

        /// Endpoint `index`'s address (the last endpoint's when `index` is past the end).
        mutating func address(_ index: Int, in shared: ResolvedEndpoints) -> SocketAddress {
            if shared.generation.load(ordering: .acquiring) != snapshot.generation { snapshot = shared.snapshot() }
            return snapshot.addresses[min(index, snapshot.addresses.count - 1)]
        }
    }
}
