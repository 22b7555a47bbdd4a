import CCrypto

/// A hash function named by TLS: a certificate's signature hash (`tls-server-end-point`) or a TLS 1.3
/// cipher suite's hash (`tls-exporter`). One-shot digests and HMACs through libcrypto's EVP layer:
/// used once per connection, so its few allocations do not matter here (SCRAM's hot path keeps its own).
enum TLSHash: Sendable, Equatable {
    case sha224, sha256, sha384, sha512

    /// Output size in bytes.
    var size: Int {
        switch self {
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    private var evp: OpaquePointer? {
        switch self {
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }

    /// H(data).
    func digest(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        data.withUnsafeBufferPointer { bytes in
            _ = EVP_Digest(bytes.baseAddress, bytes.count, &out, &length, evp, nil)
        }
        return Array(out.prefix(Int(length)))
    }

    /// HMAC(key, data) (RFC 2104).
    func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBytes in
            data.withUnsafeBufferPointer { dataBytes in
                _ = HMAC(evp, keyBytes.baseAddress, Int32(keyBytes.count), dataBytes.baseAddress, dataBytes.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    /// HKDF-Expand (RFC 5869 §2.3): `length` bytes from the pseudorandom key `prk` and `info`.
    func hkdfExpand(prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = hmac(key: prk, data: block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(length))
    }

    /// TLS 1.3 HKDF-Expand-Label (RFC 8446 §7.1): HkdfLabel = length (2 bytes) ‖ "tls13 "+label
    /// (1-byte length) ‖ context (1-byte length).
    func hkdfExpandLabel(secret: [UInt8], label: String, context: [UInt8], length: Int) -> [UInt8] {
        let fullLabel = Array("tls13 \(label)".utf8)
        var info: [UInt8] = [UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), UInt8(fullLabel.count)]
        info += fullLabel
        info.append(UInt8(context.count))
        info += context
        return hkdfExpand(prk: secret, info: info, length: length)
    }
}
