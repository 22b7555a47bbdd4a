// What every part of a session shares while it handles an event: who, when, the actions so far, timers.
import LoadProfile
import LoadResults
import XMPPCore

/// The state a session's parts share — `ConnectionLife` (connect, login, reconnect, logout) and
/// `StepRunner` (the profile's steps) — and the ways they act: append actions (`send`, `record`,
/// timers) and ask the whole session for what only the machine may do (`request`).
///
/// Invariants: `pending` holds the actions of the event being handled and is empty between events;
/// at most one timeout and one wake-up are armed (`timeout`, `wake` say what they mean); a part that
/// sets `request` returns without acting further.
struct SessionContext {
    /// Who the session is; only `node` changes.
    var identity: SessionIdentity
    let script: SessionScript
    let settings: SessionSettings
    unowned let host: any SessionHost
    /// The event being handled happened at this instant.
    var now: SessionInstant
    /// Actions produced while handling the current event (the caller's buffer while `handle` runs).
    var pending: [SessionAction] = []
    var rng: SeededGenerator
    var timeout: SessionTimeout?
    var wake: SessionWake?
    /// The full JID the server bound (nil while not logged in).
    var boundJID: String?
    /// The resource asked for at bind (rendered once per session).
    var resource = ""
    /// XEP-0198 state, while the profile asks for stream management and the server granted it.
    var streamManagement: StreamManagementSession?
    /// The features after authentication offered XEP-0352 client state indication.
    var offersClientState = false
    /// The run's load phase ended for this session: finish the step in flight, then log out.
    var stopRequested = false
    /// The connection's socket stopped draining: no new step starts until it drains (backpressure).
    var writeBlocked = false
    /// The last iq id number used (steps `q<n>`, keep-alives `ka<n>`).
    var requestCounter: UInt32 = 0
    /// What a part asked of the whole session; the machine handles it when the part returned.
    var request: SessionRequest?

    /// True when the session must not start anything new: this session or the whole run is stopping.
    var isStopping: Bool { stopRequested || host.isStopping }

    mutating func record(_ effect: MetricEffect) { pending.append(.record(effect)) }

    /// Counts `error` (also for the session's node) and keeps its detail as its kind's example.
    mutating func recordError(_ error: SessionError) {
        record(.errorExample(kind: error.kind, text: error.detail))
        record(.error(kind: error.kind, node: identity.node))
    }

    /// Records `metric` from `intended` (corrected) and `actual` (service) to now; also for `node`.
    mutating func recordLatency(_ metric: MetricID, from intended: SessionInstant, serviceFrom actual: SessionInstant, node: ServerNode? = nil) {
        record(.latency(metric, corrected: now.nanoseconds(since: intended), service: now.nanoseconds(since: actual), node: node))
    }

    /// Sends a stanza: counted, and queued for acks (with an ack request every `request_every`) while
    /// stream management is on.
    mutating func send(_ element: XMLElement) {
        record(.count(StanzaKind.of(element).outboundCounter))
        pending.append(.send(element))
        if let session = streamManagement, let every = script.streamManagement?.requestEvery,
            let request = session.sent(element, requestEvery: every)
        {
            pending.append(.send(request))
        }
    }

    /// Sends a stamped chat message: as bytes written straight from the value, or as an element while
    /// stream management is on (its resend queue keeps elements).
    mutating func send(_ message: StampedMessage) {
        guard streamManagement == nil else { return send(message.element) }
        record(.count(StanzaKind.message.outboundCounter))
        pending.append(.sendMessage(message))
    }

    mutating func nextRequestID() -> String {
        requestCounter &+= 1
        return "q\(requestCounter)"
    }

    mutating func armTimeout(after amount: Duration, _ purpose: SessionTimeout) {
        timeout = purpose
        pending.append(.armTimeout(at: now + amount))
    }

    mutating func armWake(at instant: SessionInstant, _ purpose: SessionWake) {
        wake = purpose
        pending.append(.armWake(at: instant))
    }

    mutating func cancelWake() {
        guard wake != nil else { return }
        wake = nil
        pending.append(.cancelWake)
    }
}

/// What the armed timeout means when it comes due.
enum SessionTimeout: Equatable {
    case login
    case step(name: String)
    case logout(since: SessionInstant)
}

/// What the armed wake-up means when it comes due.
enum SessionWake: Equatable {
    case think(due: SessionInstant)
    case mucJoinRetry
    case reconnect
}

/// What a part of the session asks of the whole (`SessionContext.request`).
enum SessionRequest: Equatable {
    /// The login succeeded: run the profile from the first step after the login.
    case startProgram
    /// The stream was resumed: carry the program on where the drop left it.
    case resumeProgram
    /// Log out now.
    case logout
    /// End the session (nil: it completed), unless the error is a drop that a resumption or a
    /// reconnect covers.
    case end(SessionError?)
}
