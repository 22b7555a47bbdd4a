/// Caches the keys SCRAM derives from a password, per (algorithm, password, salt, iterations), as
/// RFC 5802 §5.1 allows: thousands of test accounts that share one password and one salt cost one
/// PBKDF2 (4096+ HMAC rounds, ~1 ms) instead of one per login.
///
/// One per event loop, used only on that loop: not `Sendable` and without a lock on purpose (the
/// sessions of a loop run one at a time). Bounded: at most `capacity` entries, oldest evicted first.
public final class SCRAMKeyCache {
    /// The keys a client needs: ClientKey (to sign), StoredKey (H(ClientKey)), ServerKey (to verify).
    struct Keys {
        let clientKey: [UInt8]
        let storedKey: [UInt8]
        let serverKey: [UInt8]
    }

    private struct Key: Hashable {
        let algorithm: SCRAMAlgorithm
        let password: [UInt8]
        let salt: [UInt8]
        let iterations: Int
    }

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

    func keys(_ algorithm: SCRAMAlgorithm, password: [UInt8], salt: [UInt8], iterations: Int) throws(SASLError) -> Keys {
        let key = Key(algorithm: algorithm, password: password, salt: salt, iterations: iterations)
        if let keys = entries[key] {
            hits += 1
            return keys
        }
        let keys = try Self.derive(algorithm, password: password, salt: salt, iterations: iterations)
        derivations += 1
        if order.count >= capacity {
            entries[order.removeFirst()] = nil
        }
        entries[key] = keys
        order.append(key)
        return keys
    }

    static func derive(_ algorithm: SCRAMAlgorithm, password: [UInt8], salt: [UInt8], iterations: Int) throws(SASLError) -> Keys {
        let salted = try CryptoPrimitives.pbkdf2(algorithm, password: password, salt: salt, iterations: iterations)
        let clientKey = CryptoPrimitives.hmac(algorithm, key: salted, data: Array("Client Key".utf8))
        return Keys(clientKey: clientKey, storedKey: CryptoPrimitives.hash(algorithm, clientKey),
                    serverKey: CryptoPrimitives.hmac(algorithm, key: salted, data: Array("Server Key".utf8)))
    }
}
