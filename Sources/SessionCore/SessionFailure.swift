// How a session ended with an error: the error and the login phase it failed in.
import XMPPCore

/// How a session ended with an error, as its last action (`SessionAction.ended`) reports it.
///
/// `loginPhase` names where a login failed (`connect` while connecting, then the login's own phase:
/// `tls`, `features`, `register`, `sasl`, `bind`, `session`, `resume`); nil when the session failed
/// after logging in (a step, a drop, a stream error while running).
public struct SessionFailure: Equatable, Sendable {
    public let error: SessionError
    public let loginPhase: LoginPhase?

    public init(error: SessionError, loginPhase: LoginPhase?) {
        self.error = error
        self.loginPhase = loginPhase
    }
}
