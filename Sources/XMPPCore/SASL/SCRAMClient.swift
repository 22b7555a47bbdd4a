import Foundation

/// The client side of one SCRAM exchange (RFC 5802; RFC 7677 for SHA-256), without channel binding.
///
/// `clientFirstMessage()` → server-first → `clientFinalMessage(serverFirst:)` → server-final →
/// `verifyServerFinal(_:)`. The server signature is always verified: a server that cannot prove it
/// knows the password fails the login. Keys derived from the password come from the loop's
/// `SCRAMKeyCache` when one is given. The value is dropped after the login, so it stays small.
///
/// Hostile servers: the server-first message must follow RFC 5802's grammar (`r=`, `s=`, `i=` in
/// that order, printable nonce, base64 salt, decimal iteration count); an iteration count above
/// `maxIterations` (default `defaultMaxIterations`, 100,000) fails with `sasl-iteration-count` before
/// any PBKDF2 work; the server signature is compared in constant time.
///
/// The user name and password are prepared with SASLprep (RFC 4013, RFC 5802 §2.2); one that cannot
/// be prepared (a control character, say) is used unchanged — `run` refuses such a password up front.
public struct SCRAMClient {
    public let algorithm: SCRAMAlgorithm
    private let username: String
    private let password: [UInt8]
    private let clientNonce: String
    private let authorizationIdentity: String?
    private let cache: SCRAMKeyCache?
    /// Set by `clientFinalMessage`: the signature the server must prove.
    private var expectedServerSignature: [UInt8]?
    /// Set by `keyRequest(serverFirst:)`: the server-first text and its full nonce.
    private var serverFirst: (text: String, nonce: String)?

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
        maxIterations: Int = SCRAMClient.defaultMaxIterations
    ) {
        self.maxIterations = min(max(1, maxIterations), Self.iterationCeiling)
        self.algorithm = algorithm
        self.username = SASLprep.preparedOrUnchanged(username)
        self.password = Array(SASLprep.preparedOrUnchanged(password).utf8)
        self.clientNonce = clientNonce ?? Data(RandomPool.shared.bytes(18)).base64EncodedString()
        self.authorizationIdentity = authorizationIdentity
        self.cache = cache
    }

    private var gs2Header: String {
        "n," + (authorizationIdentity.map { "a=" + Self.escape($0) } ?? "") + ","
    }

    private var clientFirstBare: String { "n=\(Self.escape(username)),r=\(clientNonce)" }

    /// `n,,n=user,r=nonce`.
    public func clientFirstMessage() -> [UInt8] {
        Array((gs2Header + clientFirstBare).utf8)
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
    public mutating func keyRequest(serverFirst: [UInt8]) throws(SASLError) -> SCRAMKeyRequest {
        let serverFirstText = String(decoding: serverFirst, as: UTF8.self)
        let attributes = try Self.attributes(serverFirst)
        if let error = attributes.value("e") { throw .serverError(Self.bounded(error)) }
        if let mandatory = attributes.value("m") { throw .unsupportedExtension(Self.bounded(mandatory)) }
        // RFC 5802 §7: server-first-message = nonce "," salt "," iteration-count ["," extensions]
        let keys = attributes.pairs.prefix(3).map(\.key)
        guard keys == [UInt8(ascii: "r"), UInt8(ascii: "s"), UInt8(ascii: "i")],
            let nonce = attributes.value("r"), let saltText = attributes.value("s"),
            let iterationText = attributes.value("i")
        else {
            throw .malformed("server-first is not r=…,s=…,i=…")
        }
        guard nonce.utf8.allSatisfy(Self.isPrintable) else { throw .malformed("the nonce has non-printable characters") }
        guard nonce.utf8.count > clientNonce.utf8.count, nonce.utf8.starts(with: clientNonce.utf8) else { throw .nonceMismatch }
        guard let salt = Data(base64Encoded: saltText).map(Array.init), !salt.isEmpty else {
            throw .malformed("salt is not base64")
        }
        guard !iterationText.isEmpty, iterationText.utf8.count <= 10,
            iterationText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let iterations = Int(iterationText), iterations >= 1, iterations <= maxIterations
        else {
            throw .iterationCount(Self.bounded(iterationText), limit: maxIterations)
        }
        self.serverFirst = (serverFirstText, nonce)
        return SCRAMKeyRequest(algorithm: algorithm, password: password, salt: salt, iterations: iterations)
    }

    /// The client-final message from keys derived for the request `keyRequest(serverFirst:)` returned.
    /// Call only after a successful `keyRequest(serverFirst:)`.
    public mutating func clientFinalMessage(keys: SCRAMKeys) -> [UInt8] {
        guard let (serverFirstText, nonce) = serverFirst else {
            preconditionFailure("clientFinalMessage(keys:) before keyRequest(serverFirst:)")
        }
        let channelBinding = Data(gs2Header.utf8).base64EncodedString()
        let withoutProof = "c=\(channelBinding),r=\(nonce)"
        let authMessage = Array("\(clientFirstBare),\(serverFirstText),\(withoutProof)".utf8)
        let clientSignature = CryptoPrimitives.hmac(algorithm, key: keys.storedKey, data: authMessage)
        let proof = zip(keys.clientKey, clientSignature).map { $0 ^ $1 }
        expectedServerSignature = CryptoPrimitives.hmac(algorithm, key: keys.serverKey, data: authMessage)
        return Array("\(withoutProof),p=\(Data(proof).base64EncodedString())".utf8)
    }

    /// Checks the server-final message (`v=signature`); throws unless the signature matches.
    public func verifyServerFinal(_ serverFinal: [UInt8]) throws(SASLError) {
        let attributes = try Self.attributes(serverFinal)
        if let error = attributes.value("e") { throw .serverError(Self.bounded(error)) }
        guard let expected = expectedServerSignature else { throw .malformed("server-final before client-final") }
        guard let verifier = attributes.value("v"), let signature = Data(base64Encoded: verifier) else {
            throw .malformed("server-final lacks v")
        }
        guard CryptoPrimitives.constantTimeEqual(Array(signature), expected) else { throw .serverSignatureMismatch }
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
            case UInt8(ascii: "="): escaped += Array("=3D".utf8)
            case UInt8(ascii: ","): escaped += Array("=2C".utf8)
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// The `k=v` attributes of one SCRAM message, in order (a later duplicate key wins on lookup).
    struct Attributes {
        var pairs: [(key: UInt8, value: String)] = []

        func value(_ key: Unicode.Scalar) -> String? {
            pairs.last(where: { $0.key == UInt8(ascii: key) })?.value
        }
    }

    /// Parses `k=v,k=v` byte by byte (keys are one ASCII letter; values may contain `=`).
    static func attributes(_ message: [UInt8]) throws(SASLError) -> Attributes {
        var result = Attributes()
        result.pairs.reserveCapacity(4)
        for part in message.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard part.count >= 2, part[part.startIndex + 1] == UInt8(ascii: "=") else {
                throw .malformed("attribute '\(String(decoding: part, as: UTF8.self))'")
            }
            result.pairs.append((part[part.startIndex], String(decoding: part.dropFirst(2), as: UTF8.self)))
        }
        return result
    }
}
