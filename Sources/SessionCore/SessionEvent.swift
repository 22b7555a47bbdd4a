// Something that happened to a session: the events a SessionMachine takes.
import XMPPCore

/// Something that happened to a session, fed to `SessionMachine.handle(_:now:)`.
public enum SessionEvent: Sendable {
    /// Begin: the machine arms the login timeout and asks for a connection.
    case start
    /// The connection is up.
    case connected
    /// The connection could not be made.
    case connectFailed(ConnectionFailure)
    /// The TLS handshake the machine asked for completed, with the connection's channel-binding data
    /// (`.none` when the run reads none: no `-PLUS` and no bound FAST mechanism then).
    case tlsEstablished(ChannelBindingData)
    /// The server sent this depth-1 element.
    case received(XMLElement)
    /// The server sent `</stream:stream>`.
    case streamClosed
    /// The server's bytes broke the XML stream rules.
    case streamFailed(XMPPStreamError)
    /// The connection went away: nil when it closed without an error, else the failure.
    case connectionLost(ConnectionFailure?)
    /// The armed coarse timer came due.
    case timeoutFired
    /// The armed wake-up came due.
    case wakeFired
    /// The run's load phase ended: finish the current step and log out.
    case stop
    /// Close now, counting this error.
    case abort(SessionError)
    /// The connection's socket became writable (true) or stopped draining (false).
    case writability(Bool)
    /// The run drops this session on purpose (`--churn`): close and reconnect.
    case churn
    /// The PBKDF2 the machine asked for (`deriveKey`) finished.
    case keyDerived(Result<SCRAMKeys, SASLError>)
}
