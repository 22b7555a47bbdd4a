/// What SCRAM keys are derived from: the PBKDF2 input of one login (RFC 5802 §3 `SaltedPassword`).
///
/// A `Sendable` value, so the derivation (PBKDF2: `iterations` HMAC rounds, ~1 ms per 4096 with
/// SHA-1) can run on a thread pool instead of the event loop: `derive()` is thread-safe. The
/// iteration count has already been checked against the client's cap when a request exists.
/// Also the `SCRAMKeyCache` key. Holds the password bytes: never log or print it.
public struct SCRAMKeyRequest: Sendable, Hashable, CustomStringConvertible {
    public let algorithm: SCRAMAlgorithm
    let password: [UInt8]
    public let salt: [UInt8]
    public let iterations: Int

    init(algorithm: SCRAMAlgorithm, password: [UInt8], salt: [UInt8], iterations: Int) {
        self.algorithm = algorithm
        self.password = password
        self.salt = salt
        self.iterations = iterations
    }

    /// Runs PBKDF2 and derives ClientKey, StoredKey and ServerKey. Blocking, CPU-bound, thread-safe.
    public func derive() throws(SASLError) -> SCRAMKeys {
        let salted = try CryptoPrimitives.pbkdf2(algorithm, password: password, salt: salt, iterations: iterations)
        let clientKey = CryptoPrimitives.hmac(algorithm, key: salted, data: Self.clientKeyLabel)
        return SCRAMKeys(
            clientKey: clientKey, storedKey: CryptoPrimitives.hash(algorithm, clientKey),
            serverKey: CryptoPrimitives.hmac(algorithm, key: salted, data: Self.serverKeyLabel))
    }

    /// RFC 5802 §3's HMAC inputs, built once.
    private static let clientKeyLabel = Array("Client Key".utf8)
    private static let serverKeyLabel = Array("Server Key".utf8)

    /// No password: `SCRAM-SHA-1, i=4096, 16-byte salt`.
    public var description: String {
        "\(algorithm), i=\(iterations), \(salt.count)-byte salt"
    }
}
