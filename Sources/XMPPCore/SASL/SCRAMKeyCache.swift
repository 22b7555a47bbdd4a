/// Caches the keys SCRAM derives from a password, per (algorithm, password, salt, iterations), as
/// RFC 5802 §5.1 allows: thousands of test accounts that share one password and one salt cost one
/// PBKDF2 (4096+ HMAC rounds, ~1 ms) instead of one per login.
///
/// One per event loop, used only on that loop: not `Sendable` and without a lock on purpose (the
/// sessions of a loop run one at a time). Bounded: at most `capacity` entries, oldest evicted first.
public final class SCRAMKeyCache {
    private typealias Key = SCRAMKeyRequest
    typealias Keys = SCRAMKeys

    public let capacity: Int
    private var entries: [Key: Keys] = [:]
    private var order: [Key] = []
    /// PBKDF2 computations done (cache misses).
    public private(set) var derivations = 0
    /// Lookups answered from the cache.
    public private(set) var hits = 0

    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// The cached keys for `request`, or nil (counted as neither hit nor derivation).
    public func cachedKeys(for request: SCRAMKeyRequest) -> SCRAMKeys? {
        guard let keys = entries[request] else { return nil }
        hits += 1
        return keys
    }

    /// Stores keys derived elsewhere (off the loop) for `request`, evicting the oldest entry if full.
    public func store(_ keys: SCRAMKeys, for request: SCRAMKeyRequest) {
        derivations += 1
        guard entries[request] == nil else { return }
        if order.count >= capacity {
            entries[order.removeFirst()] = nil
        }
        entries[request] = keys
        order.append(request)
    }

    /// The keys for `request`, derived here (on the calling thread) on a miss.
    func keys(for request: SCRAMKeyRequest) throws(SASLError) -> SCRAMKeys {
        if let keys = cachedKeys(for: request) {
            return keys
        }
        let keys = try request.derive()
        store(keys, for: request)
        return keys
    }
}
