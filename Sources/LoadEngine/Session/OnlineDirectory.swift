import Atomics

/// Which accounts of this generator's range are claimed by a session, and which are online (the
/// server echoed their available presence, so it routes messages for their bare JID to them): one
/// directory per run, shared by every event loop without locks.
///
/// Two bits per account slot (`0 ..< capacity`, the position of the account in the run's range), kept
/// in atomic 64-bit words: claiming is a compare-and-swap, so two sessions never log in as the same
/// account at once, and "pick a random online account" reads words without blocking anyone. Memory:
/// 2 bits per account (10,000 accounts: 2.5 KB). Reads are racy by nature — an account picked as
/// online may go offline before the message arrives; the message ledger counts that honestly.
final class OnlineDirectory: Sendable {
    let capacity: Int
    private let claimed: [ManagedAtomic<UInt64>]
    private let online: [ManagedAtomic<UInt64>]

    init(capacity: Int) {
        precondition(capacity > 0, "a run has at least one account")
        self.capacity = capacity
        let words = (capacity + 63) / 64
        claimed = (0..<words).map { _ in ManagedAtomic<UInt64>(0) }
        online = (0..<words).map { _ in ManagedAtomic<UInt64>(0) }
    }

    /// Claims `slot` for a new session; false when another session holds it.
    func claim(_ slot: Int) -> Bool {
        let (word, bit) = Self.position(slot)
        let previous = claimed[word].loadThenBitwiseOr(with: bit, ordering: .acquiringAndReleasing)
        return previous & bit == 0
    }

    /// Claims the first free slot at or after `start` (wrapping), or nil when every slot is taken.
    func claimFree(startingAt start: Int) -> Int? {
        for offset in 0..<capacity {
            let slot = (start + offset) % capacity
            if claim(slot) { return slot }
        }
        return nil
    }

    /// Releases a claim (and the online bit) when the session ends.
    func release(_ slot: Int) {
        setOnline(slot, false)
        let (word, bit) = Self.position(slot)
        _ = claimed[word].loadThenBitwiseAnd(with: ~bit, ordering: .acquiringAndReleasing)
    }

    /// Marks `slot` online (able to receive messages) or not.
    func setOnline(_ slot: Int, _ isOnline: Bool) {
        let (word, bit) = Self.position(slot)
        if isOnline {
            _ = online[word].loadThenBitwiseOr(with: bit, ordering: .acquiringAndReleasing)
        } else {
            _ = online[word].loadThenBitwiseAnd(with: ~bit, ordering: .acquiringAndReleasing)
        }
    }

    func isOnline(_ slot: Int) -> Bool {
        let (word, bit) = Self.position(slot)
        return online[word].load(ordering: .relaxed) & bit != 0
    }

    /// A uniformly chosen online slot other than `excluded`, or nil when none is online.
    /// A few random probes first (cheap when many are online), then a scan from a random word.
    func randomOnline(excluding excluded: Int, using rng: inout some RandomNumberGenerator) -> Int? {
        for _ in 0..<8 {
            let slot = Int.random(in: 0..<capacity, using: &rng)
            if slot != excluded && isOnline(slot) { return slot }
        }
        let words = online.count
        let startWord = Int.random(in: 0..<words, using: &rng)
        for offset in 0..<words {
            let word = (startWord + offset) % words
            var bits = online[word].load(ordering: .relaxed)
            if word * 64 <= excluded && excluded < word * 64 + 64 { bits &= ~(UInt64(1) << UInt64(excluded - word * 64)) }
            if bits != 0 {
                // Pick a random set bit of this word.
                let count = bits.nonzeroBitCount
                var pick = Int.random(in: 0..<count, using: &rng)
                while true {
                    let bit = bits.trailingZeroBitCount
                    if pick == 0 { return word * 64 + bit }
                    pick -= 1
                    bits &= bits - 1
                }
            }
        }
        return nil
    }

    private static func position(_ slot: Int) -> (word: Int, bit: UInt64) {
        (slot >> 6, UInt64(1) << UInt64(slot & 63))
    }
}
