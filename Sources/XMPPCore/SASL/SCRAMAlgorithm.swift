import CCrypto

/// The hash function of a SCRAM mechanism (RFC 5802 SHA-1, RFC 7677 SHA-256, SHA-512).
public enum SCRAMAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha1 = "SCRAM-SHA-1"
    case sha256 = "SCRAM-SHA-256"
    case sha512 = "SCRAM-SHA-512"

    /// Digest size in bytes.
    public var digestSize: Int {
        switch self {
        case .sha1: return 20
        case .sha256: return 32
        case .sha512: return 64
        }
    }

    var evp: OpaquePointer? {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha256: return EVP_sha256()
        case .sha512: return EVP_sha512()
        }
    }
}
