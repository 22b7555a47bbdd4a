import Testing

@testable import XMPPCore

/// SCRAM against the RFC test vectors, and the ways a server can be wrong.
@Suite struct SCRAMClientTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let algorithm: SCRAMAlgorithm
        let nonce: String
        let serverFirst: String
        let clientFinal: String
        let serverFinal: String
        var testDescription: String { algorithm.rawValue }
    }

    static let vectors = [
        // RFC 5802 §5.
        Vector(
            algorithm: .sha1, nonce: "fyko+d2lbbFgONRv9qkxdawL",
            serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
            clientFinal: "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
            serverFinal: "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
        // RFC 7677 §3.
        Vector(
            algorithm: .sha256, nonce: "rOprNGfwEbeRWgbNEkqO",
            serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
        // No RFC vector for SHA-512: computed once with Python's hashlib.pbkdf2_hmac/hmac (independent code).
        Vector(
            algorithm: .sha512, nonce: "rOprNGfwEbeRWgbNEkqO",
            serverFirst: "r=rOprNGfwEbeRWgbNEkqOsrv512,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            clientFinal:
                "c=biws,r=rOprNGfwEbeRWgbNEkqOsrv512,p=zLk8NQGbO1ZkJKiFTosXs9IWwXVJs8Yb85bFjLzXSzvtDE2iPRKG6Uj1IsfeM4Hzt+J6tIRdEAgyrp5VdMDhDQ==",
            serverFinal: "v=0TppuEKamtk7/uTIJoc4xaZpnedMRbBn+8w+65Af5uLLHhYIZc8Y6kxVOtpgy9aoCQ3N4mfhrA34UWwqjdcHLQ=="),
    ]

    @Test(arguments: vectors)
    func rfcVector(_ vector: Vector) throws {
        var client = SCRAMClient(algorithm: vector.algorithm, username: "user", password: "pencil", clientNonce: vector.nonce)
        #expect(String(decoding: client.clientFirstMessage(), as: UTF8.self) == "n,,n=user,r=\(vector.nonce)")
        let final = try client.clientFinalMessage(serverFirst: Array(vector.serverFirst.utf8))
        #expect(String(decoding: final, as: UTF8.self) == vector.clientFinal)
        try client.verifyServerFinal(Array(vector.serverFinal.utf8))
    }

    @Test func serverSignatureMismatchFails() throws {
        let vector = Self.vectors[0]
        var client = SCRAMClient(algorithm: .sha1, username: "user", password: "pencil", clientNonce: vector.nonce)
        _ = try client.clientFinalMessage(serverFirst: Array(vector.serverFirst.utf8))
        #expect(throws: SASLError.serverSignatureMismatch) {
            try client.verifyServerFinal(Array("v=AAAAAAAAAAAAAAAAAAAAAAAAAAA=".utf8))
        }
        // The right signature for another password must fail too.
        var other = SCRAMClient(algorithm: .sha1, username: "user", password: "wrong", clientNonce: vector.nonce)
        _ = try other.clientFinalMessage(serverFirst: Array(vector.serverFirst.utf8))
        #expect(throws: SASLError.serverSignatureMismatch) { try other.verifyServerFinal(Array(vector.serverFinal.utf8)) }
    }

    @Test(arguments: [
        ("r=someoneelse123,s=QSXCR+Q6sek8bf92,i=4096", "sasl-nonce"),
        ("r=abc,s=QSXCR+Q6sek8bf92,i=4096", "sasl-nonce"),  // server added nothing
        ("r=abcdef,s=QSXCR+Q6sek8bf92,i=0", "sasl-iteration-count"),
        ("r=abcdef,s=QSXCR+Q6sek8bf92,i=-5", "sasl-iteration-count"),
        ("r=abcdef,s=QSXCR+Q6sek8bf92,i=99999999999", "sasl-iteration-count"),
        ("r=abcdef,s=QSXCR+Q6sek8bf92,i=many", "sasl-iteration-count"),
        ("r=abcdef,s=***,i=4096", "sasl-malformed"),
        ("r=abcdef,i=4096", "sasl-malformed"),
        ("m=ext,r=abcdef,s=QSXCR+Q6sek8bf92,i=4096", "sasl-malformed"),
        ("e=other-error", "sasl-server-error"),
        ("garbage", "sasl-malformed"),
    ])
    func badServerFirstIsRejected(serverFirst: String, kind: String) {
        var client = SCRAMClient(algorithm: .sha1, username: "user", password: "pencil", clientNonce: "abc")
        do {
            _ = try client.clientFinalMessage(serverFirst: Array(serverFirst.utf8))
            Issue.record("accepted \(serverFirst)")
        } catch {
            #expect(error.kind == kind)
        }
    }

    @Test func serverFinalErrorIsReported() throws {
        let vector = Self.vectors[0]
        var client = SCRAMClient(algorithm: .sha1, username: "user", password: "pencil", clientNonce: vector.nonce)
        _ = try client.clientFinalMessage(serverFirst: Array(vector.serverFirst.utf8))
        #expect(throws: SASLError.serverError("invalid-proof")) { try client.verifyServerFinal(Array("e=invalid-proof".utf8)) }
    }

    @Test func usernameIsEscaped() {
        let client = SCRAMClient(algorithm: .sha1, username: "a=b,c", password: "x", clientNonce: "n")
        #expect(String(decoding: client.clientFirstMessage(), as: UTF8.self) == "n,,n=a=3Db=2Cc,r=n")
    }

    @Test func cacheDerivesOncePerPasswordSaltAndIterations() throws {
        let cache = SCRAMKeyCache()
        let vector = Self.vectors[0]
        var finals: [[UInt8]] = []
        for _ in 0..<3 {
            var client = SCRAMClient(algorithm: .sha1, username: "user", password: "pencil", clientNonce: vector.nonce, cache: cache)
            finals.append(try client.clientFinalMessage(serverFirst: Array(vector.serverFirst.utf8)))
            try client.verifyServerFinal(Array(vector.serverFinal.utf8))
        }
        #expect(cache.derivations == 1)
        #expect(cache.hits == 2)
        #expect(Set(finals).count == 1)
        var otherSalt = SCRAMClient(algorithm: .sha1, username: "user", password: "pencil", clientNonce: "abc", cache: cache)
        _ = try otherSalt.clientFinalMessage(serverFirst: Array("r=abcdef,s=c2FsdA==,i=4096".utf8))
        #expect(cache.derivations == 2)
    }

    @Test func cacheIsBounded() throws {
        let cache = SCRAMKeyCache(capacity: 2)
        for salt in ["YQ==", "Yg==", "Yw==", "YQ=="] {
            var client = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "abc", cache: cache)
            _ = try client.clientFinalMessage(serverFirst: Array("r=abcdef,s=\(salt),i=16".utf8))
        }
        #expect(cache.derivations == 4)  // "YQ==" was evicted before it came back
    }

    @Test func randomNoncesDiffer() {
        let a = SCRAMClient(algorithm: .sha1, username: "u", password: "p").clientFirstMessage()
        let b = SCRAMClient(algorithm: .sha1, username: "u", password: "p").clientFirstMessage()
        #expect(a != b)
    }

    @Test func plainAndAnonymous() {
        #expect(SASLPlain(username: "user", password: "pencil").initialResponse() == Array("\0user\0pencil".utf8))
        #expect(SASLPlain(username: "u", password: "p", authorizationIdentity: "admin").initialResponse() == Array("admin\0u\0p".utf8))
        #expect(SASLAnonymous().initialResponse() == [])
    }

    @Test(
        arguments: [
            (["PLAIN", "SCRAM-SHA-1"], nil, SASLMechanism.scramSHA1),
            (["PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-256"], nil, .scramSHA256),
            (["SCRAM-SHA-512", "SCRAM-SHA-1"], nil, .scramSHA512),
            (["PLAIN"], nil, .plain),
            (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], nil, .scramSHA1),
            (["PLAIN", "SCRAM-SHA-1"], .plain, .plain),
            (["ANONYMOUS", "PLAIN"], .anonymous, .anonymous),
        ] as [([String], SASLMechanism?, SASLMechanism)])
    func mechanismChoice(offered: [String], forced: SASLMechanism?, expected: SASLMechanism) {
        #expect(SASLMechanism.choose(offered: offered, forced: forced) == expected)
    }

    @Test func noChoiceWhenNothingUsable() {
        #expect(SASLMechanism.choose(offered: ["SCRAM-SHA-1-PLUS", "DIGEST-MD5"], forced: nil) == nil)
        #expect(SASLMechanism.choose(offered: ["SCRAM-SHA-1"], forced: .scramSHA256) == nil)
        #expect(SASLMechanism.choose(offered: ["ANONYMOUS"], forced: nil) == nil)
    }
}
