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

    /// The hash's width as the CCrypto shim's helpers name it (1 for SHA-1, else its bits).
    var bits: Int32 {
        switch self {
        case .sha1: return 1
        case .sha256: return 256
        case .sha512: return 512
        }
    }

    /// The digest fetched once from libcrypto's default provider (OpenSSL 3 fetches a legacy
    /// `EVP_sha1()` again on every init, with locks and allocations). Immutable and shared by every
    /// thread; nil only if the provider lacks it (then `evp` is used).
    var fetched: OpaquePointer? {
        switch self {
        case .sha1: return Self.fetchedSHA1.pointer
        case .sha256: return Self.fetchedSHA256.pointer
        case .sha512: return Self.fetchedSHA512.pointer
        }
    }

    private static let fetchedSHA1 = FetchedDigest("SHA1")
    private static let fetchedSHA256 = FetchedDigest("SHA2-256")
    private static let fetchedSHA512 = FetchedDigest("SHA2-512")
}

/// An `EVP_MD` fetched once and kept for the process's life (never freed: a few hundred bytes).
private final class FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ name: String) { pointer = EVP_MD_fetch(nil, name, nil) }
}
