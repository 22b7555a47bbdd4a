import Testing

@testable import XMPPCore

/// HMAC and the hash on libcrypto's digests, against RFC 2202 / RFC 4231 vectors and values computed
/// with Python's hmac/hashlib (independent code): every algorithm, keys shorter than, equal to and
/// longer than a block, and empty input.
@Suite struct CryptoPrimitivesTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test(arguments: [
        (SCRAMAlgorithm.sha1, [UInt8](repeating: 0x0b, count: 20), "Hi There", "b617318655057264e28bc0b6fb378c8ef146be00"),  // RFC 2202/4231 case 1
        (.sha256, [UInt8](repeating: 0x0b, count: 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),  // RFC 2202/4231 case 1
        (
            .sha512, [UInt8](repeating: 0x0b, count: 20), "Hi There",
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        ),  // RFC 2202/4231 case 1
        (.sha1, Array("Jefe".utf8), "what do ya want for nothing?", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),  // case 2
        (.sha256, Array("Jefe".utf8), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),  // case 2
        (
            .sha512, Array("Jefe".utf8), "what do ya want for nothing?",
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        ),  // case 2
        (
            .sha1,
            [UInt8](repeating: 0xaa, count: 131),
            "Test Using Larger Than Block-Size Key - Hash Key First", "90d0dace1c1bdc957339307803160335bde6df2b"
        ),  // key longer than every block (RFC 4231 case 6)
        (
            .sha256,
            [UInt8](repeating: 0xaa, count: 131),
            "Test Using Larger Than Block-Size Key - Hash Key First", "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),  // key longer than every block (RFC 4231 case 6)
        (
            .sha512,
            [UInt8](repeating: 0xaa, count: 131),
            "Test Using Larger Than Block-Size Key - Hash Key First",
            "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
        ),  // key longer than every block (RFC 4231 case 6)
        (
            .sha1, [UInt8](repeating: 0xaa, count: 64),
            "a key of exactly one SHA-1/SHA-256 block", "19e4f6c07e435a46cd9aca665bc2c75e0059744f"
        ),  // key of exactly 64 bytes
        (
            .sha256,
            [UInt8](repeating: 0xaa, count: 64),
            "a key of exactly one SHA-1/SHA-256 block", "6b0fd5a0ef7a5e43a2c1321552dade2e4b66b8f849e835c97f39f65b954df4ea"
        ),  // key of exactly 64 bytes
        (
            .sha512,
            [UInt8](repeating: 0xaa, count: 64),
            "a key of exactly one SHA-1/SHA-256 block",
            "f132ecdacc55f40c7155864d40c7322e45bf5a9f50e91916f7c2d911cc66d701d1f3f1a192a0d10c18b9bed91f69e761adcc15e5d97c1abfe7ccd56993f4e47c"
        ),  // key of exactly 64 bytes
        (.sha1, [UInt8](), "", "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d"),  // empty key and data
        (.sha256, [UInt8](), "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),  // empty key and data
        (
            .sha512, [UInt8](), "",
            "b936cee86c9f87aa5d3c6f2e84cb5a4239a5fe50480a6ec66b70ab5b1f4ac6730c6c515421b327ec1d69402e53dfb49ad7381eb067b338fd7b0cb22247225d47"
        ),  // empty key and data
    ])
    func hmacMatchesTheVectors(algorithm: SCRAMAlgorithm, key: [UInt8], data: String, expected: String) {
        let mac = CryptoPrimitives.hmac(algorithm, key: key, data: Array(data.utf8))
        #expect(Self.hex(mac) == expected)
        #expect(mac.count == algorithm.digestSize)
    }

    @Test(arguments: [
        (SCRAMAlgorithm.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (.sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            .sha512, "abc",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
    ])
    func hashMatchesFIPS180(algorithm: SCRAMAlgorithm, data: String, expected: String) {
        #expect(Self.hex(CryptoPrimitives.hash(algorithm, Array(data.utf8))) == expected)
    }

    @Test func everyDigestIsFetchedOnce() {
        for algorithm in SCRAMAlgorithm.allCases {
            #expect(algorithm.fetched != nil, "\(algorithm) from the default provider")
        }
    }

    /// Across a refill of its block (300 nonces of 18 bytes > 4 KiB), the pool never hands out the
    /// same bytes twice, and requests larger than a block are served whole.
    @Test func randomPoolHandsOutEachByteOnce() {
        let pool = RandomPool()
        let nonces = (0..<300).map { _ in pool.bytes(18) }
        #expect(nonces.allSatisfy { $0.count == 18 })
        #expect(Set(nonces).count == nonces.count)
        let large = pool.bytes(RandomPool.blockSize + 1)
        #expect(large.count == RandomPool.blockSize + 1)
        #expect(Set(large).count > 200, "uniform bytes: nearly all 256 values appear in 4 KiB")
    }
}
