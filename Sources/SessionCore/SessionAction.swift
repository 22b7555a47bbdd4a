import LoadResults
import XMPPCore

/// One thing a `SessionMachine` asks its virtual user to do — with the connection, the clock, the
/// loop's recorder and gauges, or the run's directory of accounts.
///
/// Every effect of an event comes back as a value, in order: I/O and timers, and also what the
/// session measured (`record`), whether it is a message target (`setOnline`), its gauge moves and
/// what it learned about the server. The machine writes nothing shared; a test reads everything an
/// event did from the returned actions.
public enum SessionAction: Equatable, Sendable {
    /// Open a connection to the server (the machine then expects `connected` or `connectFailed`).
    case connect
    /// Write our stream header.
    case openStream
    /// Reset the stream decoder, then write a new stream header (after TLS and after SASL success).
    case restartStream
    /// Write this element.
    case send(XMLElement)
    /// Write this stamped chat message (straight to bytes, no element built).
    case sendMessage(StampedMessage)
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
    /// A measurement for the loop's recorder.
    case record(MetricEffect)
    /// The session's account is (or is no longer) a target for `to: random` (available presence seen).
    case setOnline(Bool)
    /// The session moved between stages (the loop's connecting/online gauges).
    case stageChanged(from: SessionStage, to: SessionStage)
    /// The session gives its account back (it ends; `ended` follows).
    case releaseAccount
    /// The probing session learned these facts about the server (fields it did not learn are nil).
    case learned(ServerFacts)
    /// The probing session's XEP-0202 time query sent at `sent` was answered at `received` with the
    /// server's `<utc>` text: one clock sample (`ClockOffset`).
    case clockSample(sent: SessionInstant, received: SessionInstant, utc: String)
    /// The session is over (it already recorded its outcome and gave its account back); `failure` is
    /// nil when it completed, else its error and the login phase it failed in.
    case ended(failure: SessionFailure?)
}
