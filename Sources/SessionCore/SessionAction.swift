import XMPPCore

/// One thing a `SessionMachine` asks its virtual user to do with the connection or the clock.
///
/// Metrics are not actions: the machine records them into its host's recorder directly (a value on
/// the same loop), so the engine only performs I/O and timers.
public enum SessionAction: Equatable, Sendable {
    /// Open a connection to the server (the machine then expects `connected` or `connectFailed`).
    case connect
    /// Write our stream header.
    case openStream
    /// Reset the stream decoder, then write a new stream header (after TLS and after SASL success).
    case restartStream
    /// Write this element.
    case send(XMLElement)
    /// Write this text as is (a profile's `raw` step).
    case sendRaw(String)
    /// Write `</stream:stream>`.
    case closeStream
    /// Add TLS at the bottom of the pipeline now; the machine expects `tlsEstablished` next.
    case startTLS
    /// Arm the session's one timeout for `at` (replacing any armed before); it comes back as
    /// `timeoutFired`. Coarse (the engine may fire it up to a tick late, never early).
    case armTimeout(at: SessionInstant)
    /// Arm the session's one precise wake-up (think times, retries) for `at`; it comes back as
    /// `wakeFired`.
    case armWake(at: SessionInstant)
    /// Forget the armed wake-up.
    case cancelWake
    /// Arm the keep-alive tick for `at` (replacing any armed before); it comes back as `keepAliveFired`.
    case armKeepAlive(at: SessionInstant)
    /// Run PBKDF2 for this SCRAM key request off the event loop; the result comes back as `keyDerived`.
    case deriveKey(SCRAMKeyRequest)
    /// Close the connection now.
    case close
    /// The session is over (it already recorded its outcome and gave its account back); `failure` is
    /// nil when it completed, else its error and the login phase it failed in.
    case ended(failure: SessionFailure?)
}
