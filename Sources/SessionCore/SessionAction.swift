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
    /// Open a connection to `target` (the machine then expects `connected` or `connectFailed`).
    case connect(ConnectTarget)
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
    /// Arm the session's one coarse timer for `at` (replacing any armed before): the earliest of its
    /// features' timeouts (login, step, logout, write stall, keep-alive tick). It comes back as
    /// `timeoutFired`; the engine may fire it late, never early.
    case armTimeout(at: SessionInstant)
    /// Forget the armed coarse timer (no feature has a timeout any more).
    case cancelTimeout
    /// Arm the session's one precise wake-up for `at` (replacing any armed before): the earliest of
    /// its features' wake-ups (a think time's end, a MUC join retry, a reconnect's back-off). It comes
    /// back as `wakeFired`.
    case armWake(at: SessionInstant)
    /// Forget the armed wake-up.
    case cancelWake
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

/// Where a connect goes, as the session decided: its endpoint's try number (0: its first choice,
/// k: the k-th fallback of its RFC 2782 order, `SessionHost.fallbackEndpoint`), or the location the
/// server gave for resuming the stream (XEP-0198 `location`, "host" or "host:port"). The engine only
/// looks the address up (off the loop) and connects.
public struct ConnectTarget: Equatable, Sendable {
    /// The endpoint (an index into the run's endpoints) of this try.
    public var endpoint: Int
    /// 0 for the session's first choice, k for its k-th fallback.
    public var attempt: Int
    /// Resume the stream at this location instead (only on a first try).
    public var resumeLocation: String?

    public init(endpoint: Int, attempt: Int = 0, resumeLocation: String? = nil) {
        self.endpoint = endpoint
        self.attempt = attempt
        self.resumeLocation = resumeLocation
    }
}
