import CCrypto

/// The libcrypto operations SCRAM needs, with return codes checked. Thread-safe (each call has its
/// own context; the fetched digests are immutable).
enum CryptoPrimitives {
    static func pbkdf2(_ algorithm: SCRAMAlgorithm, password: [UInt8], salt: [UInt8], iterations: Int) throws(SASLError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: algorithm.digestSize)
        let ok = password.withUnsafeBufferPointer { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                out.withUnsafeMutableBufferPointer { outBytes in
                    passwordBytes.withMemoryRebound(to: CChar.self) { passwordChars in
                        PKCS5_PBKDF2_HMAC(
                            passwordChars.baseAddress, Int32(passwordBytes.count),
                            saltBytes.baseAddress, Int32(saltBytes.count), Int32(iterations),
                            algorithm.evp, Int32(outBytes.count), outBytes.baseAddress)
                    }
                }
            }
        }
        guard ok == 1 else { throw .crypto("PKCS5_PBKDF2_HMAC") }
        return out
    }

    /// HMAC (RFC 2104) over the algorithm's digest, with libcrypto's low-level hash functions on the
    /// stack (`xmppload_hmac` in the CCrypto shim): no allocation but the result, where OpenSSL 3's
    /// EVP layer costs 3 allocations per call and its one-shot `HMAC()` 13.
    static func hmac(_ algorithm: SCRAMAlgorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 64) { out, count in
            count = Int(
                key.withUnsafeBufferPointer { keyBytes in
                    data.withUnsafeBufferPointer { dataBytes in
                        xmppload_hmac(
                            algorithm.bits, keyBytes.baseAddress, keyBytes.count, dataBytes.baseAddress, dataBytes.count,
                            out.baseAddress)
                    }
                })
        }
    }

    /// H(data) with the digest fetched once (`SCRAMAlgorithm.fetched`).
    static func hash(_ algorithm: SCRAMAlgorithm, _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        data.withUnsafeBufferPointer { bytes in
            _ = EVP_Digest(bytes.baseAddress, bytes.count, &out, &length, algorithm.fetched ?? algorithm.evp, nil)
        }
        return Array(out.prefix(Int(length)))
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths (no early exit).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }
}
