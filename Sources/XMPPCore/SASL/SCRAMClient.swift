import Foundation

/// The client side of one SCRAM exchange (RFC 5802; RFC 7677 for SHA-256), without channel binding.
///
/// `clientFirstMessage()` → server-first → `clientFinalMessage(serverFirst:)` → server-final →
/// `verifyServerFinal(_:)`. The server signature is always verified: a server that cannot prove it
/// knows the password fails the login. Keys derived from the password come from the loop's
/// `SCRAMKeyCache` when one is given. The value is dropped after the login, so it stays small.
///
/// SASLprep (RFC 4013) is not applied: test passwords and user names are ASCII, for which it is the
/// identity; a non-ASCII password is used as its UTF-8 bytes.
public struct SCRAMClient {
    public let algorithm: SCRAMAlgorithm
    private let username: String
    private let password: [UInt8]
    private let clientNonce: String
    private let authorizationIdentity: String?
    private let cache: SCRAMKeyCache?
    /// Set by `clientFinalMessage`: the signature the server must prove.
    private var expectedServerSignature: [UInt8]?

    /// Iteration counts outside this range are refused (a server asking for more is a DoS on us).
    public static let acceptedIterations = 1...10_000_000

    public init(algorithm: SCRAMAlgorithm, username: String, password: String, clientNonce: String? = nil,
                authorizationIdentity: String? = nil, cache: SCRAMKeyCache? = nil) {
        self.algorithm = algorithm
        self.username = username
        self.password = Array(password.utf8)
        self.clientNonce = clientNonce ?? Data(CryptoPrimitives.randomBytes(18)).base64EncodedString()
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

    /// Computes the client-final message from the server-first message.
    public mutating func clientFinalMessage(serverFirst: [UInt8]) throws(SASLError) -> [UInt8] {
        let serverFirstText = String(decoding: serverFirst, as: UTF8.self)
        let attributes = try Self.attributes(serverFirst)
        if let error = attributes.value("e") { throw .serverError(error) }
        if let mandatory = attributes.value("m") { throw .unsupportedExtension(mandatory) }
        guard let nonce = attributes.value("r"), let saltText = attributes.value("s"), let iterationText = attributes.value("i") else {
            throw .malformed("server-first lacks r, s or i")
        }
        guard nonce.utf8.count > clientNonce.utf8.count, nonce.utf8.starts(with: clientNonce.utf8) else { throw .nonceMismatch }
        guard let salt = Data(base64Encoded: saltText).map(Array.init), !salt.isEmpty else {
            throw .malformed("salt is not base64")
        }
        guard let iterations = Int(iterationText), Self.acceptedIterations.contains(iterations) else {
            throw .iterationCount(iterationText)
        }
        let keys: SCRAMKeyCache.Keys
        if let cache {
            keys = try cache.keys(algorithm, password: password, salt: salt, iterations: iterations)
        } else {
            keys = try SCRAMKeyCache.derive(algorithm, password: password, salt: salt, iterations: iterations)
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
        if let error = attributes.value("e") { throw .serverError(error) }
        guard let expected = expectedServerSignature else { throw .malformed("server-final before client-final") }
        guard let verifier = attributes.value("v"), let signature = Data(base64Encoded: verifier) else {
            throw .malformed("server-final lacks v")
        }
        guard Array(signature) == expected else { throw .serverSignatureMismatch }
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
