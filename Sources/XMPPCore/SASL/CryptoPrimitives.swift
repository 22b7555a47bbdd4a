import CCrypto

/// The three libcrypto operations SCRAM needs, with return codes checked. Thread-safe (libcrypto's
/// one-shot functions keep no shared state).
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

    static func hmac(_ algorithm: SCRAMAlgorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
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

    static func hash(_ algorithm: SCRAMAlgorithm, _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        data.withUnsafeBufferPointer { bytes in
            _ = EVP_Digest(bytes.baseAddress, bytes.count, &out, &length, algorithm.evp, nil)
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

    /// `count` bytes from libcrypto's CSPRNG: one call, no system call per byte (it reseeds itself).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        if ok != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        return bytes
    }
}
