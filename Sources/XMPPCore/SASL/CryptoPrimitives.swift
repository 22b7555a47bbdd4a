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

    /// HMAC (RFC 2104) over the algorithm's digest: H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ data)), K the key
    /// (hashed first when longer than a block) padded to the block size. Built on one digest
    /// context and the digest fetched once, so a call costs 3 allocations inside libcrypto where its
    /// one-shot `HMAC()` costs 13 (OpenSSL 3.0: it fetches the MAC and the digest by name each time).
    static func hmac(_ algorithm: SCRAMAlgorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        let block = algorithm.blockSize
        let size = algorithm.digestSize
        guard let context = EVP_MD_CTX_new() else { return oneShotHMAC(algorithm, key: key, data: data) }
        defer { EVP_MD_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: size)
        // The padded key, the key xor a pad, and the inner digest, on the stack.
        let done = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * block + 64) { scratch -> Bool in
            let paddedKey = UnsafeMutableBufferPointer(rebasing: scratch[0..<block])
            let pad = UnsafeMutableBufferPointer(rebasing: scratch[block..<2 * block])
            let inner = UnsafeMutableBufferPointer(rebasing: scratch[2 * block..<2 * block + 64])
            paddedKey.initialize(repeating: 0)
            let keyOK = key.withUnsafeBufferPointer { keyBytes -> Bool in
                guard keyBytes.count > block else {
                    _ = paddedKey.initialize(fromContentsOf: keyBytes)
                    return true
                }
                return digest(algorithm, context, UnsafeRawBufferPointer(keyBytes), nil, into: paddedKey.baseAddress!)
            }
            for index in 0..<block { pad[index] = paddedKey[index] ^ 0x36 }
            let innerOK = data.withUnsafeBytes { dataBytes in
                digest(algorithm, context, UnsafeRawBufferPointer(pad), dataBytes, into: inner.baseAddress!)
            }
            for index in 0..<block { pad[index] = paddedKey[index] ^ 0x5C }
            let outerOK = out.withUnsafeMutableBufferPointer { outBytes in
                digest(
                    algorithm, context, UnsafeRawBufferPointer(pad),
                    UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(inner)[0..<size]), into: outBytes.baseAddress!)
            }
            return keyOK && innerOK && outerOK
        }
        return done ? out : oneShotHMAC(algorithm, key: key, data: data)
    }

    /// H(first ‖ second) into `out` (room for the digest) through `context`; false when libcrypto refused.
    private static func digest(
        _ algorithm: SCRAMAlgorithm, _ context: OpaquePointer, _ first: UnsafeRawBufferPointer,
        _ second: UnsafeRawBufferPointer?, into out: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        var length: UInt32 = 0
        return EVP_DigestInit_ex2(context, algorithm.fetched ?? algorithm.evp, nil) == 1
            && EVP_DigestUpdate(context, first.baseAddress, first.count) == 1
            && (second.map { EVP_DigestUpdate(context, $0.baseAddress, $0.count) == 1 } ?? true)
            && EVP_DigestFinal_ex(context, out, &length) == 1
    }

    /// libcrypto's one-shot HMAC, kept for the unlikely case that a digest context cannot be made.
    private static func oneShotHMAC(_ algorithm: SCRAMAlgorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBytes in
            data.withUnsafeBufferPointer { dataBytes in
                _ = HMAC(
                    algorithm.evp, keyBytes.baseAddress, Int32(keyBytes.count),
                    dataBytes.baseAddress, dataBytes.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
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
