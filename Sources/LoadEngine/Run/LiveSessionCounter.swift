import Atomics

/// Sessions alive now (connecting, logging in or logged in) across all event loops, and the highest
/// number seen: lock-free, updated once per session start and end.
final class LiveSessionCounter: Sendable {
    private let live = ManagedAtomic<Int>(0)
    private let peakValue = ManagedAtomic<Int>(0)

    var current: Int { live.load(ordering: .relaxed) }
    var peak: Int { peakValue.load(ordering: .relaxed) }

    func increment() {
        let now = live.wrappingIncrementThenLoad(ordering: .relaxed)
        var seen = peakValue.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peakValue.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    func decrement() { live.wrappingDecrement(ordering: .relaxed) }
}
