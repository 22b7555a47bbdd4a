/// Why a login (or a logged-in session) ended badly.
///
/// A struct wrapping a private enum so new cases can be added without breaking callers. `kind` is the
/// stable, typed name under which the error is counted in the results (`sasl-not-authorized`,
/// `stream-host-unknown`, `tls-required`, …); `description` is for people.
public struct LoginError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Reason: Hashable, Sendable {
        case streamError(condition: String, text: String?)
        case saslFailure(condition: String, text: String?)
        case sasl(kind: String, detail: String)
        case noCommonMechanism(offered: [String])
        case forcedMechanismNotOffered(forced: String, offered: [String])
        case tlsRequiredButNotOffered
        case tlsRefused
        case bindFailed(condition: String)
        case sessionFailed(condition: String)
        case registrationFailed(condition: String)
        case registrationNotOffered
        case protocolViolation(String)
        case streamClosed
        case downgrade(String)
        case channelBindingUnavailable(advertised: [String]?, available: [String])
        case sasl2NotOffered
        case sasl2Continue(tasks: [String])
    }

    private let reason: Reason
    private init(_ reason: Reason) { self.reason = reason }

    /// The server sent `<stream:error>` with this defined condition.
    public static func streamError(condition: String, text: String? = nil) -> LoginError {
        LoginError(.streamError(condition: condition, text: text))
    }
    /// The server answered the SASL exchange with `<failure>` and this condition.
    public static func saslFailure(condition: String, text: String? = nil) -> LoginError {
        LoginError(.saslFailure(condition: condition, text: text))
    }
    /// Our side of SASL rejected the server's data (bad nonce, bad server signature, …).
    public static func sasl(kind: String, detail: String) -> LoginError { LoginError(.sasl(kind: kind, detail: detail)) }
    /// None of the offered mechanisms is one we may use.
    public static func noCommonMechanism(offered: [String]) -> LoginError { LoginError(.noCommonMechanism(offered: offered)) }
    /// The mechanism forced with `--sasl` (or the profile's `sasl:`) is not among those offered.
    public static func forcedMechanismNotOffered(_ forced: SASLMechanism, offered: [String]) -> LoginError {
        LoginError(.forcedMechanismNotOffered(forced: forced.name, offered: offered))
    }
    /// TLS was required (STARTTLS mode) but the server did not offer `<starttls/>`.
    public static let tlsRequiredButNotOffered = LoginError(.tlsRequiredButNotOffered)
    /// The server answered `<starttls/>` with `<failure/>`.
    public static let tlsRefused = LoginError(.tlsRefused)
    /// The resource-bind request came back as an error.
    public static func bindFailed(condition: String) -> LoginError { LoginError(.bindFailed(condition: condition)) }
    /// The session request came back as an error.
    public static func sessionFailed(condition: String) -> LoginError { LoginError(.sessionFailed(condition: condition)) }
    /// In-band registration failed with a condition other than `conflict` (which means the account exists).
    public static func registrationFailed(condition: String) -> LoginError { LoginError(.registrationFailed(condition: condition)) }
    /// Registration was asked for but the server's features do not advertise XEP-0077.
    public static let registrationNotOffered = LoginError(.registrationNotOffered)
    /// The server sent something the protocol does not allow at this point.
    public static func protocolViolation(_ what: String) -> LoginError { LoginError(.protocolViolation(what)) }
    /// The server closed the stream (`</stream:stream>`) before the login finished.
    public static let streamClosed = LoginError(.streamClosed)
    /// XEP-0440's client rules caught mechanisms or channel-binding types removed from the offer
    /// (XEP-0474's hash mismatch is reported by the SCRAM exchange under the same kind).
    public static func downgrade(_ what: String) -> LoginError { LoginError(.downgrade(what)) }
    /// A forced `-PLUS` mechanism cannot bind: this connection has no channel-binding type the
    /// server advertises (or none at all: plaintext, or the TLS layer computed none).
    public static func channelBindingUnavailable(advertised: [String]?, available: [ChannelBindingType]) -> LoginError {
        LoginError(.channelBindingUnavailable(advertised: advertised, available: available.map(\.name)))
    }
    /// `--login sasl2` but the server does not offer SASL2 (XEP-0388) on this stream.
    public static let sasl2NotOffered = LoginError(.sasl2NotOffered)
    /// The server answered SASL2 with `<continue/>`: it wants tasks (2FA, password change, …) that
    /// xmppload does not perform, so the login ends at the first one (a loop cannot form).
    public static func sasl2Continue(tasks: [String]) -> LoginError { LoginError(.sasl2Continue(tasks: tasks)) }

    /// The typed error kind counted in results.
    public var kind: String {
        switch reason {
        case .streamError(let condition, _): return "stream-\(condition)"
        case .saslFailure(let condition, _): return "sasl-\(condition)"
        case .sasl(let kind, _): return kind
        case .noCommonMechanism: return "sasl-no-common-mechanism"
        case .forcedMechanismNotOffered: return "sasl-mechanism-not-offered"
        case .tlsRequiredButNotOffered: return "tls-not-offered"
        case .tlsRefused: return "tls-refused"
        case .bindFailed(let condition): return "bind-\(condition)"
        case .sessionFailed(let condition): return "session-\(condition)"
        case .registrationFailed(let condition): return "register-\(condition)"
        case .registrationNotOffered: return "register-not-offered"
        case .protocolViolation: return "protocol-violation"
        case .streamClosed: return "stream-closed"
        case .downgrade: return "sasl-downgrade"
        case .channelBindingUnavailable: return "sasl-channel-binding"
        case .sasl2NotOffered: return "sasl2-not-offered"
        case .sasl2Continue: return "sasl2-continue"
        }
    }

    static func list(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }

    /// " (unsupported here: DIGEST-MD5, X-OAUTH2)" for the offered mechanisms xmppload cannot use.
    static func unsupportedNote(_ offered: [String]) -> String {
        let unsupported = offered.filter { !SASLMechanism.isSupported($0) }
        return unsupported.isEmpty ? "" : " (unsupported here: \(unsupported.joined(separator: ", ")))"
    }

    public var description: String {
        switch reason {
        case .streamError(let condition, let text):
            return "stream error <\(condition)/>" + (text.map { ": \($0)" } ?? "")
        case .saslFailure(let condition, let text):
            return "SASL failure <\(condition)/>" + (text.map { ": \($0)" } ?? "")
        case .sasl(_, let detail): return "SASL: \(detail)"
        case .noCommonMechanism(let offered):
            // Short enough for the report's example of the kind (160 characters): the remedy is its hint.
            return "no usable SASL mechanism; offered: \(Self.list(offered))\(Self.unsupportedNote(offered)); "
                + "xmppload uses SCRAM-SHA-512/-256/-1, PLAIN"
        case .forcedMechanismNotOffered(let forced, let offered):
            let usable = offered.filter { SASLMechanism.isSupported($0) }
            return "--sasl \(forced): not offered by the server; offered: \(Self.list(offered))\(Self.unsupportedNote(offered))"
                + (usable.isEmpty ? "" : "; usable: \(usable.joined(separator: ", "))")
        case .tlsRequiredButNotOffered:
            return
                "STARTTLS is required (--tls starttls) but the server does not offer it; nothing was sent in cleartext (use --tls none to allow a plaintext login)"
        case .tlsRefused: return "the server refused STARTTLS"
        case .bindFailed(let condition): return "resource bind failed: <\(condition)/>"
        case .sessionFailed(let condition): return "session establishment failed: <\(condition)/>"
        case .registrationFailed(let condition): return "in-band registration failed: <\(condition)/>"
        case .registrationNotOffered:
            return "in-band registration (XEP-0077) is not offered by the server: registration is disabled there"
        case .protocolViolation(let what): return "protocol violation: \(what)"
        case .streamClosed: return "the server closed the stream"
        case .downgrade(let what): return "downgrade detected: \(what)"
        case .channelBindingUnavailable(let advertised, let available):
            return "no channel binding for -PLUS: the server advertises \(advertised.map { Self.list($0) } ?? "no types (XEP-0440)"); "
                + "this connection can bind to \(Self.list(available))"
        case .sasl2NotOffered: return "SASL2 (XEP-0388) is not offered by the server (--login sasl2); --login auto uses it only where offered"
        case .sasl2Continue(let tasks):
            let named = tasks.prefix(4).map { String($0.prefix(40)) }.joined(separator: ", ")
            return "SASL2 <continue/>: the server asks for tasks xmppload does not perform (\(named.isEmpty ? "none named" : named))"
        }
    }
}
