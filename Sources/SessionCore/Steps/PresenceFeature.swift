// Presence as a session feature: its steps, whether the session is a message target, caps answers.
import LoadProfile
import LoadResults
import XMPPCore

/// The session's presence: the presence steps (available, directed, unavailable, subscribe,
/// unsubscribe), whether the session is available — a `to: random` target once the server took its
/// presence in —, the wait for the echo of our available presence (RFC 6121 §4.2.2; a courtesy some
/// servers skip, so bounded: `echoWait`), and the answers to disco#info about the XEP-0115
/// capabilities we advertise. It keeps being available across a stream resumption and forgets it on
/// a fresh login.
struct PresenceFeature {
    /// Our available presence was sent and taken in (others may pick us as a `to: random` target).
    private(set) var isAvailable = false
    /// The presence step waits for its echo.
    private var awaitingEcho = false
    /// The presence step completed without its echo; an echo arriving now is counted as late.
    private var echoOverdue = false

    /// How long the presence step waits for its echo at most (less when the step's timeout is
    /// shorter). A server that echoes does so within a round trip; one that never does (jabberd2)
    /// would otherwise hold every session for the whole step timeout. 2 s is ten times the slowest echo
    /// seen on a saturated Prosody (login.yaml, 500 logins in 5 s on this 2-core machine, login p99
    /// 3.8 s: presence p50 46 ms, p99 119 ms, max 208 ms), yet short enough that a session on a silent
    /// server reaches its next step soon; an echo later than this is counted (`presence_echo_late`).
    static let echoWait = Duration.seconds(2)

    /// Starts a presence step.
    mutating func start(_ action: PresenceAction, timeout: Duration, tools: inout StepTools, _ s: inout SessionShared) -> StepOutcome {
        s.send(StepRequests.presence(action, caps: s.script.entityCaps) { tools.render($0, s) })
        switch action {
        case .available:
            // A `to: random` target once the server has taken the presence in: at its echo, or when
            // the bounded wait for one is over. Not at the send: a message to the bare JID that
            // overtakes the presence inside the server finds no available resource (Prosody answers
            // service-unavailable: 2 of 20,000 demo messages were lost that way).
            isAvailable = true
            echoOverdue = false
            awaitingEcho = true
            return .waiting(timeout: min(timeout, Self.echoWait))
        case .unavailable:
            s.actions.append(.setOnline(false))
            isAvailable = false
            return .completed(measured: false)
        case .directed, .subscribe, .unsubscribe:
            return .completed(measured: false)
        }
    }

    /// What an arriving stanza does to the presence step waiting for its echo.
    mutating func answer(_ stanza: XMLElement, boundJID: String?, _ s: inout SessionShared) -> StepOutcome? {
        guard awaitingEcho, stanza.name == "presence", stanza.attribute("from") == boundJID else { return nil }
        awaitingEcho = false
        guard stanza.attribute("type") == "error" else {
            s.actions.append(.setOnline(true))
            return .completed(measured: true)
        }
        // Refused: not available after all, so not a message target.
        s.actions.append(.setOnline(false))
        isAvailable = false
        let error = SessionError.stanzaError(condition: Stanza.stanzaCondition(stanza))
        s.record(.errorExample(kind: error.kind, text: SessionError.serverText(of: stanza)))
        return .failed(error)
    }

    /// No echo within the bounded wait: the presence was sent and the session is available; the step
    /// completes unmeasured and the run counts the silent server (`presence_echo_missing`).
    mutating func timedOut(_ s: inout SessionShared) -> StepOutcome {
        awaitingEcho = false
        s.count(.presenceEchoMissing)
        echoOverdue = true
        s.actions.append(.setOnline(true))
        return .completed(measured: false)
    }

    /// An echo after the presence step stopped waiting for it: a slow server, not a silent one.
    mutating func noteLateEcho(_ stanza: XMLElement, boundJID: String?, _ s: inout SessionShared) {
        guard echoOverdue, stanza.name == "presence", stanza.attribute("from") == boundJID, stanza.attribute("type") == nil else { return }
        echoOverdue = false
        s.count(.presenceEchoLate)
    }

    /// The answer to a disco#info query about what our capabilities mean, when it is one.
    func capsAnswer(to stanza: XMLElement, _ s: SessionShared) -> XMLElement? {
        s.script.entityCaps?.discoInfoAnswer(to: stanza)
    }

    /// After a resumption: available again if we were (others may target us again).
    func resumed(_ s: inout SessionShared) {
        if isAvailable { s.actions.append(.setOnline(true)) }
    }

    /// A fresh login: nothing of the lost stream's presence holds.
    mutating func forget() {
        isAvailable = false
        awaitingEcho = false
    }
}
