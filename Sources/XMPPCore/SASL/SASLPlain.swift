/// SASL PLAIN (RFC 4616): `[authzid] NUL authcid NUL password` as the initial response, the user
/// name and password prepared with SASLprep (RFC 4013; unchanged when they cannot be prepared).
public struct SASLPlain: Sendable {
    public let username: String
    public let password: String
    public let authorizationIdentity: String?

    public init(username: String, password: String, authorizationIdentity: String? = nil) {
        self.username = username
        self.password = password
        self.authorizationIdentity = authorizationIdentity
    }

    public func initialResponse() -> [UInt8] {
        Array((authorizationIdentity ?? "").utf8) + [0] + Array(SASLprep.preparedOrUnchanged(username).utf8) + [0]
            + Array(SASLprep.preparedOrUnchanged(password).utf8)
    }
}

/// SASL ANONYMOUS (RFC 4505): an optional trace token as the initial response.
public struct SASLAnonymous: Sendable {
    public let trace: String

    public init(trace: String = "") { self.trace = trace }

    public func initialResponse() -> [UInt8] { Array(trace.utf8) }
}
