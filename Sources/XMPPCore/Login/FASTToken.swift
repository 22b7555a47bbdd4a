/// A FAST token (XEP-0484) a server issued to one virtual user, for its next logins: the mechanism
/// it was requested for, the secret and its expiry as the server wrote it (XEP-0082 DateTime).
///
/// A secret like a password: it lives in memory only (per virtual user, held by the caller), is
/// never written to results, and `description` never shows it. Bounded: `LoginMachine` ignores a
/// token over `maxLength` bytes.
public struct FASTToken: Sendable, Equatable, CustomStringConvertible {
    /// The HT mechanism the token is used with.
    public let mechanism: FASTMechanism
    /// The token's text (the HMAC key).
    let secret: String
    /// When the server says it expires (XEP-0082), as sent; empty when the server sent none.
    public let expiry: String

    /// Tokens longer than this (bytes) are ignored: ejabberd's are 44, Prosody's about 50.
    public static let maxLength = 1024

    public init(mechanism: FASTMechanism, secret: String, expiry: String) {
        self.mechanism = mechanism
        self.secret = secret
        self.expiry = expiry
    }

    /// Mechanism and expiry only.
    public var description: String { "FASTToken(\(mechanism.name), expires \(expiry.isEmpty ? "?" : expiry))" }
}
