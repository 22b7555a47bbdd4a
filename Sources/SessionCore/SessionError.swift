import XMPPCore

/// Why a session (or one of its steps) failed: one typed value, turned into its stable string form
/// (`kind`) only at the edge, where it is counted in results.
///
/// Each kind means one thing: the server closing its stream after login (`stream-closed`) is not a
/// TCP close without a stream close (`connection-closed`), nor data after the server's close
/// (`xml-data-after-close`, an `XMPPStreamError`).
public enum SessionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The transport failed: connect refused/timed out, reset, out of descriptors or ports, TLS…
    case connection(ConnectionFailure)
    /// The server's bytes broke the XML stream rules (malformed, too large, restricted…).
    case xml(XMPPStreamError)
    /// The login failed (SASL, bind, STARTTLS, stream error during login…).
    case login(LoginError)
    /// A `<stream:error>` after login.
    case streamError(condition: String)
    /// The server sent `</stream:stream>` while the session was running.
    case streamClosedByServer
    /// A stanza arrived before any stream header.
    case noStreamHeader
    /// Connect plus login did not finish within the login step's timeout; the phase it was stuck in
    /// (`connect` while connecting) is named in `detail`, the kind stays `timeout-login`.
    case loginTimeout(phase: LoginPhase?)
    /// A step's answer did not come within its timeout.
    case stepTimeout(step: String)
    /// An iq we sent (roster, ping, disco…) or our presence came back as an error.
    case stanzaError(condition: String)
    /// A MUC join or nick change was refused.
    case mucError(condition: String)
    /// The instant-room configuration we sent as a room's creator was refused.
    case mucConfigureError(condition: String)
    /// A MUC step ran while the session was in no room.
    case mucNotJoined
    /// TLS was needed (STARTTLS offered and wanted, or direct TLS) but the run has no TLS set-up, or
    /// the TLS handler could not be added.
    case tlsUnavailable
    /// The run's graceful-stop deadline passed while the session was still alive.
    case stoppedAtDeadline
    /// The run stopped while the session was waiting to reconnect after a drop.
    case reconnectAbandoned
    /// The server stopped reading: our writes stayed queued past the time or byte bound.
    case writeStalled
    /// Our keep-alive ping got no answer within one keep-alive interval (a dead connection).
    case keepAliveTimeout
    /// A feature step names a feature no session feature implements (`SessionFeatures`).
    case featureUnknown(String)

    /// The stable name counted in results (`errors` in summary.json).
    public var kind: String {
        switch self {
        case .connection(let failure): return failure.kind
        case .xml(let error): return error.kind
        case .login(let error): return error.kind
        case .streamError(let condition): return "stream-\(condition)"
        case .streamClosedByServer: return "stream-closed"
        case .noStreamHeader: return "protocol-violation"
        case .loginTimeout: return "timeout-login"
        case .stepTimeout(let step): return "timeout-\(step)"
        case .stanzaError(let condition): return "stanza-\(condition)"
        case .mucError(let condition): return "muc-\(condition)"
        case .mucConfigureError(let condition): return "muc-configure-\(condition)"
        case .mucNotJoined: return "muc-not-joined"
        case .tlsUnavailable: return "tls-unavailable"
        case .stoppedAtDeadline: return "stopped-at-deadline"
        case .reconnectAbandoned: return "reconnect-abandoned"
        case .writeStalled: return "write-stalled"
        case .keepAliveTimeout: return "timeout-keepalive"
        case .featureUnknown(let name): return "feature-unknown-\(name)"
        }
    }

    /// True for a lost connection (server restart, reset, stream error or close, a login that timed
    /// out): what a session with a reconnect policy comes back from. Authentication, XML and step
    /// failures are not drops.
    public var isConnectionDrop: Bool {
        switch self {
        case .connection(.tlsCertificate): return false  // reconnecting does not fix a certificate
        case .connection(let failure): return failure != .bootstrapWithoutSession
        case .streamError, .streamClosedByServer, .loginTimeout, .keepAliveTimeout, .writeStalled: return true
        case .login(let error): return error.kind.hasPrefix("stream-")
        default: return false
        }
    }

    public var description: String { kind }

    /// What a person needs beyond the kind, kept as the report's example of it: the login or XML
    /// error's own description (the server's `<text/>`, the SASL mechanisms it offered, the limit
    /// exceeded); nil when the kind says it all. Never holds a password.
    public var detail: String? {
        switch self {
        case .login(let error): return error.description
        case .xml(let error): return error.description
        case .loginTimeout(let phase): return Self.stuckDescription(phase)
        default: return nil
        }
    }

    /// "stuck at PHASE: what the server did not do" for a login timeout.
    static func stuckDescription(_ phase: LoginPhase?) -> String {
        switch phase {
        case .connect: return "stuck at connect: the TCP connection was not established"
        case .tls: return "stuck at tls: no answer to <starttls/>, or the TLS handshake did not finish"
        case .features: return "stuck at features: no <stream:features> after our stream header"
        case .register: return "stuck at register: no answer to the in-band registration"
        case .sasl: return "stuck at sasl: the SASL exchange got no <success/> or <failure/>"
        case .bind: return "stuck at bind: no stream features after SASL, or no answer to the resource bind"
        case .session: return "stuck at session: no answer to the session establishment"
        case .resume: return "stuck at resume: no <resumed/> or <failed/> after our XEP-0198 <resume/>"
        case nil: return "stuck before the login began"
        }
    }
}

/// A transport failure, mapped from the I/O layer's errors (errno, NIO, TLS) by the engine.
public enum ConnectionFailure: Hashable, Sendable {
    case refused
    case timeout
    case reset
    /// The peer closed the TCP connection (no stream close first, or during connect).
    case closed
    /// EMFILE / ENFILE.
    case descriptorsExhausted
    /// EADDRNOTAVAIL / EADDRINUSE: out of ephemeral ports for this source address.
    case addressNotAvailable
    case unreachable
    /// The TLS handshake or record layer failed.
    case tls
    /// The server's certificate did not verify, and why (`--insecure` skips verification).
    case tlsCertificate(TLSCertificateProblem)
    /// Connect failed with no more specific cause.
    case connectFailed
    /// Any other errno.
    case io(errno: Int32)
    /// A channel was initialized with no session waiting for it (an internal invariant broke).
    case bootstrapWithoutSession
    /// A web transport's HTTP server answered with this status where it should not have (a refused
    /// WebSocket upgrade, a failed BOSH request).
    case httpStatus(Int)
    /// The server answered the WebSocket upgrade with 101 but without the `xmpp` subprotocol or a
    /// valid accept key.
    case webSocketUpgrade
    /// A web transport broke its protocol (a binary WebSocket message, a BOSH response that is not a
    /// `<body/>`, a response to a request never sent).
    case webProtocol
    /// The BOSH connection manager ended the session (`type='terminate'`) with this condition.
    case boshTerminated(condition: String)
    case other

    public var kind: String {
        switch self {
        case .refused: return "connect-refused"
        case .timeout: return "connect-timeout"
        case .reset: return "connection-reset"
        case .closed: return "connection-closed"
        case .descriptorsExhausted: return "fd-exhausted"
        case .addressNotAvailable: return "addr-not-available"
        case .unreachable: return "network-unreachable"
        case .tls: return "tls"
        case .tlsCertificate(let problem): return "tls-certificate-\(problem.rawValue)"
        case .connectFailed: return "connect-failed"
        case .io(let code): return "io-\(code)"
        case .bootstrapWithoutSession: return "bootstrap-no-session"
        case .httpStatus(let status): return "http-\(status)"
        case .webSocketUpgrade: return "ws-upgrade-refused"
        case .webProtocol: return "web-protocol-error"
        case .boshTerminated(let condition): return "bosh-\(condition)"
        case .other: return "connection-other"
        }
    }
}

/// Why the server's certificate did not verify (error kinds `tls-certificate-<raw value>`).
public enum TLSCertificateProblem: String, Hashable, Sendable, CaseIterable {
    /// The certificate (or one in its chain) is past its notAfter date.
    case expired
    /// The certificate (or one in its chain) is before its notBefore date (check the clocks).
    case notYetValid = "not-yet-valid"
    /// Self-signed, or its chain ends in a root the system trust store does not hold (a private CA).
    case selfSigned = "self-signed"
    /// The chain does not lead to a trusted root (unknown issuer, bad signature, wrong purpose, …).
    case untrusted
    /// A valid certificate, but not for the XMPP domain (or, with an IP-address domain, that address).
    case hostnameMismatch = "hostname-mismatch"
}

/// Errors counted without ending the session (they do not fail a step).
public enum SessionNotice: Hashable, Sendable {
    /// A message to us came back as `type='error'`.
    case messageError(condition: String)
    /// `to: random` found nobody online to send to.
    case noOnlineTarget
    /// The server answered our XEP-0198 `<enable/>` with `<failed/>` (the session goes on without it).
    case streamManagementRefused(condition: String)
    /// The server acknowledged more stanzas than we sent (XEP-0198); acks stop being tracked.
    case streamManagementBadAck

    public var kind: String {
        switch self {
        case .messageError(let condition): return "message-\(condition)"
        case .noOnlineTarget: return "message-no-online-target"
        case .streamManagementRefused(let condition): return "sm-enable-\(condition)"
        case .streamManagementBadAck: return "sm-bad-ack"
        }
    }
}

extension SessionError {
    /// The server's own words in a stanza error: the `<text/>` (RFC 6120 §8.3.2) of `stanza`'s
    /// `<error/>` in `conditionNamespace` (stanza errors by default); nil when there is none. Kept
    /// as the report's example of the error kind (`MetricsRecorder.recordErrorExample`), bounded there.
    public static func serverText(of stanza: XMLElement, conditionNamespace: String = XMPPNamespace.stanzas) -> String? {
        let container = stanza.name == "error" ? stanza : stanza.firstChild(named: "error", namespace: nil)
        guard let text = container?.firstChild(named: "text", namespace: conditionNamespace)?.text else { return nil }
        return text.isEmpty ? nil : text
    }
}
