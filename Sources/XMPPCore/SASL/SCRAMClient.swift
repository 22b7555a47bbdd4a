/// The client side of one SCRAM exchange (RFC 5802; RFC 7677 for SHA-256), with or without channel
/// binding (`-PLUS`: `SCRAMChannelBinding`) and XEP-0474 downgrade protection.
///
/// `clientFirstMessage()` → server-first → `clientFinalMessage(serverFirst:)` → server-final →
/// `verifyServerFinal(_:)`. The server signature is always verified: a server that cannot prove it
/// knows the password fails the login. Keys derived from the password come from the loop's
/// `SCRAMKeyCache` when one is given. The value is dropped after the login, so it stays small.
///
/// Hostile servers: the server-first message must follow RFC 5802's grammar (`r=`, `s=`, `i=` in
/// that order, printable nonce, base64 salt, decimal iteration count); an iteration count above
/// `maxIterations` (default `defaultMaxIterations`, 100,000) fails with `sasl-iteration-count` before
/// any PBKDF2 work; the server signature is compared in constant time; a downgrade-protection hash
/// (`h=` or `d=`, XEP-0474) that does not match the offer the client saw fails with `sasl-downgrade`.
///
/// The user name and password are prepared with SASLprep (RFC 4013, RFC 5802 §2.2); one that cannot
/// be prepared (a control character, say) is used unchanged — `run` refuses such a password up front.
///
/// Messages are built and parsed as bytes (no `Data`, no intermediate strings): a login's SCRAM costs
/// about a dozen allocations.
public struct SCRAMClient {
    public let algorithm: SCRAMAlgorithm
    private let password: [UInt8]
    /// `gs2-header` (`n,[a=authzid],`).
    private let gs2Header: [UInt8]
    /// `client-first-message-bare` (`n=user,r=nonce`).
    private let clientFirstBare: [UInt8]
    /// Where the client nonce sits in `clientFirstBare`.
    private let clientNonce: Range<Int>
    private let cache: SCRAMKeyCache?
    /// Set by `clientFinalMessage`: the signature the server must prove.
    private var expectedServerSignature: [UInt8]?
    /// Set by `keyRequest(serverFirst:)`: the server-first message and where its full nonce is.
    private var serverFirst: (message: [UInt8], nonce: Range<Int>)?
    /// The channel binding of this exchange (the gs2 flag, and the data `c=` carries).
    public let channelBinding: SCRAMChannelBinding
    /// What the client saw offered, to check the server's XEP-0474 hash against; nil: not checked.
    private let downgradeProtection: SCRAMDowngradeProtection?
    /// What the server-first message said about XEP-0474 (set by `keyRequest(serverFirst:)`).
    public private(set) var downgradeCheck = SCRAMDowngradeCheck.pending

    /// The largest iteration count accepted unless configured otherwise: 25 times the 4096 servers
    /// use by default, ~25 ms of PBKDF2 on one core (a server asking for more is a DoS on us).
    public static let defaultMaxIterations = 100_000
    /// Hard upper bound for `maxIterations`, whatever is configured.
    public static let iterationCeiling = 10_000_000
    /// Iteration counts above this are refused with `sasl-iteration-count`.
    public let maxIterations: Int

    public init(
        algorithm: SCRAMAlgorithm, username: String, password: String, clientNonce: String? = nil,
        authorizationIdentity: String? = nil, cache: SCRAMKeyCache? = nil,
        maxIterations: Int = SCRAMClient.defaultMaxIterations, channelBinding: SCRAMChannelBinding = .unsupported,
        downgradeProtection: SCRAMDowngradeProtection? = nil
    ) {
        self.maxIterations = min(max(1, maxIterations), Self.iterationCeiling)
        self.algorithm = algorithm
        self.password = Array(SASLprep.preparedOrUnchanged(password).utf8)
        self.channelBinding = channelBinding
        self.downgradeProtection = downgradeProtection
        if let authorizationIdentity {
            gs2Header = Array("\(channelBinding.flag),a=\(Self.escape(authorizationIdentity)),".utf8)
        } else if case .unsupported = channelBinding {
            gs2Header = Self.plainGS2Header
        } else {
            gs2Header = Array("\(channelBinding.flag),,".utf8)
        }
        var bare = Array("n=".utf8)
        bare += Self.escape(SASLprep.preparedOrUnchanged(username)).utf8
        bare += ",r=".utf8
        let nonceStart = bare.count
        if let clientNonce {
            bare += clientNonce.utf8
        } else {
            Base64.encode(RandomPool.shared.bytes(18), into: &bare)
        }
        self.clientNonce = nonceStart..<bare.count
        clientFirstBare = bare
        self.cache = cache
    }

    /// `n,,`: no channel binding, no authorization identity.
    private static let plainGS2Header = Array("n,,".utf8)

    /// `n,,n=user,r=nonce`.
    public func clientFirstMessage() -> [UInt8] {
        gs2Header + clientFirstBare
    }

    /// Computes the client-final message from the server-first message, deriving the keys here
    /// (from the cache when one is given): `keyRequest(serverFirst:)` then `clientFinalMessage(keys:)`.
    public mutating func clientFinalMessage(serverFirst: [UInt8]) throws(SASLError) -> [UInt8] {
        let request = try keyRequest(serverFirst: serverFirst)
        let keys: SCRAMKeys
        if let cache {
            keys = try cache.keys(for: request)
        } else {
            keys = try request.derive()
        }
        return clientFinalMessage(keys: keys)
    }

    /// Checks the server-first message (grammar, nonce, salt, iteration cap) and returns what the
    /// keys are derived from, so the PBKDF2 work can run elsewhere (`SCRAMKeyRequest.derive()`).
    public mutating func keyRequest(serverFirst message: [UInt8]) throws(SASLError) -> SCRAMKeyRequest {
        let attributes = try Attributes(message)
        if let error = attributes.text("e") { throw .serverError(Self.bounded(error)) }
        if let mandatory = attributes.text("m") { throw .unsupportedExtension(Self.bounded(mandatory)) }
        // RFC 5802 §7: server-first-message = nonce "," salt "," iteration-count ["," extensions]
        guard attributes.startsWith("r", "s", "i"), let nonce = attributes.range("r"), let saltRange = attributes.range("s"),
            let iterationRange = attributes.range("i")
        else {
            throw .malformed("server-first is not r=…,s=…,i=…")
        }
        let nonceBytes = message[nonce]
        guard nonceBytes.allSatisfy(Self.isPrintable) else { throw .malformed("the nonce has non-printable characters") }
        let ours = clientFirstBare[clientNonce]
        guard nonceBytes.count > ours.count, nonceBytes.starts(with: ours) else { throw .nonceMismatch }
        guard let salt = Base64.decode(message[saltRange]), !salt.isEmpty else {
            throw .malformed("salt is not base64")
        }
        let iterationDigits = message[iterationRange]
        guard !iterationDigits.isEmpty, iterationDigits.count <= 10,
            iterationDigits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            case let iterations = iterationDigits.reduce(0, { $0 * 10 + Int($1 - UInt8(ascii: "0")) }),
            iterations >= 1, iterations <= maxIterations
        else {
            throw .iterationCount(Self.bounded(String(decoding: iterationDigits, as: UTF8.self)), limit: maxIterations)
        }
        try checkDowngradeProtection(attributes)
        self.serverFirst = (message, nonce)
        return SCRAMKeyRequest(algorithm: algorithm, password: password, salt: salt, iterations: iterations)
    }

    /// The client-final message from keys derived for the request `keyRequest(serverFirst:)` returned.
    /// Call only after a successful `keyRequest(serverFirst:)`.
    public mutating func clientFinalMessage(keys: SCRAMKeys) -> [UInt8] {
        guard let (serverFirstMessage, nonce) = serverFirst else {
            preconditionFailure("clientFinalMessage(keys:) before keyRequest(serverFirst:)")
        }
        // client-final-message-without-proof = "c=" base64(gs2-header [cbind-data]) ",r=" nonce; the proof follows.
        var cbindInput = gs2Header
        if case .bound(_, let data) = channelBinding { cbindInput += data }
        var final: [UInt8] = []
        final.reserveCapacity(
            2 + Base64.encodedCount(cbindInput.count) + 3 + nonce.count + 3 + Base64.encodedCount(algorithm.digestSize))
        final += "c=".utf8
        Base64.encode(cbindInput, into: &final)
        final += ",r=".utf8
        final += serverFirstMessage[nonce]
        // AuthMessage = client-first-message-bare "," server-first-message "," client-final-message-without-proof
        var authMessage: [UInt8] = []
        authMessage.reserveCapacity(clientFirstBare.count + 1 + serverFirstMessage.count + 1 + final.count)
        authMessage += clientFirstBare
        authMessage.append(UInt8(ascii: ","))
        authMessage += serverFirstMessage
        authMessage.append(UInt8(ascii: ","))
        authMessage += final
        let clientSignature = CryptoPrimitives.hmac(algorithm, key: keys.storedKey, data: authMessage)
        expectedServerSignature = CryptoPrimitives.hmac(algorithm, key: keys.serverKey, data: authMessage)
        final += ",p=".utf8
        // ClientProof = ClientKey XOR ClientSignature, on the stack.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { proof in
            let count = min(keys.clientKey.count, clientSignature.count, proof.count)
            for index in 0..<count { proof[index] = keys.clientKey[index] ^ clientSignature[index] }
            Base64.encode(UnsafeBufferPointer(rebasing: proof[0..<count]), into: &final)
        }
        return final
    }

    /// Checks the server-final message (`v=signature`); throws unless the signature matches.
    public func verifyServerFinal(_ serverFinal: [UInt8]) throws(SASLError) {
        let attributes = try Attributes(serverFinal)
        if let error = attributes.text("e") { throw .serverError(Self.bounded(error)) }
        guard let expected = expectedServerSignature else { throw .malformed("server-final before client-final") }
        guard let verifier = attributes.range("v"), let signature = Base64.decode(serverFinal[verifier]) else {
            throw .malformed("server-final lacks v")
        }
        guard CryptoPrimitives.constantTimeEqual(signature, expected) else { throw .serverSignatureMismatch }
    }

    /// XEP-0474: compares the server's `h=` (0.4+) or `d=` (0.3) hash with the one of the offer the
    /// client saw; records `downgradeCheck`.
    private mutating func checkDowngradeProtection(_ attributes: Attributes) throws(SASLError) {
        let legacy: Bool
        let range: Range<Int>
        if let current = attributes.range("h") {
            (legacy, range) = (false, current)
        } else if let old = attributes.range("d") {
            (legacy, range) = (true, old)
        } else {
            downgradeCheck = .absent
            return
        }
        guard let downgradeProtection else {
            downgradeCheck = .absent
            return
        }
        guard let received = Base64.decode(attributes.message[range]),
            CryptoPrimitives.constantTimeEqual(received, downgradeProtection.expectedHash(algorithm, legacy: legacy))
        else {
            throw .downgradeDetected(
                "the server's XEP-0474 hash (\(legacy ? "d" : "h")=) does not match the mechanisms and channel-binding types received")
        }
        downgradeCheck = .verified
    }

    /// RFC 5802 `printable`: %x21-2B / %x2D-7E (no comma).
    private static func isPrintable(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && byte != UInt8(ascii: ",")
    }

    /// Server-provided text cut to 64 characters, for error descriptions.
    private static func bounded(_ text: String) -> String {
        text.count <= 64 ? text : String(text.prefix(64)) + "…"
    }

    /// RFC 5802 §5.1: `=` → `=3D`, `,` → `=2C` in names.
    static func escape(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ",") }) else { return name }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(name.utf8.count + 6)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "="): escaped += "=3D".utf8
            case UInt8(ascii: ","): escaped += "=2C".utf8
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// The `k=v` attributes of one SCRAM message, in order, as ranges of the message's bytes (a later
    /// duplicate key wins on lookup). Keys are one ASCII byte; values may contain `=`.
    struct Attributes {
        let message: [UInt8]
        /// The key byte and where its value is, per attribute (SCRAM messages have a handful).
        private(set) var pairs: [(key: UInt8, value: Range<Int>)] = []

        init(_ message: [UInt8]) throws(SASLError) {
            self.message = message
            pairs.reserveCapacity(4)
            var start = 0
            while start <= message.count {
                let end = message[start...].firstIndex(of: UInt8(ascii: ",")) ?? message.count
                guard end - start >= 2, message[start + 1] == UInt8(ascii: "=") else {
                    throw .malformed("attribute '\(String(decoding: message[start..<end], as: UTF8.self))'")
                }
                pairs.append((message[start], start + 2..<end))
                start = end + 1
            }
        }

        func range(_ key: Unicode.Scalar) -> Range<Int>? {
            pairs.last(where: { $0.key == UInt8(ascii: key) })?.value
        }

        /// The value as text (for errors and tests).
        func text(_ key: Unicode.Scalar) -> String? {
            range(key).map { String(decoding: message[$0], as: UTF8.self) }
        }

        /// Whether the first three keys are these, in this order.
        func startsWith(_ first: Unicode.Scalar, _ second: Unicode.Scalar, _ third: Unicode.Scalar) -> Bool {
            pairs.count >= 3 && pairs[0].key == UInt8(ascii: first) && pairs[1].key == UInt8(ascii: second)
                && pairs[2].key == UInt8(ascii: third)
        }
    }
}
