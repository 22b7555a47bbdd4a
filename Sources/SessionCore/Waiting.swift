// The waiting steps as one table: what answers each, how long it waits, what its errors are.
import LoadProfile
import LoadResults
import XMPPCore

/// What the current step waits for before it completes — one row per kind of wait. Each row says
/// what answers it (`answer(to:…)`), how long it waits (`timeout(for:)`) and what its timeout means
/// (`timedOut(step:)`). Adding a step that waits for an answer is one case here and the request that
/// starts it (see `StepRequests`, `ExtensionRequests`).
enum Waiting: Equatable {
    case nothing
    /// The result of our iq `id`; an error answer fails the step (`stanza-<condition>`).
    case iqResponse(id: String)
    /// The answer to an extension step's iq (`ExtensionRequests`): an error meaning "unsupported"
    /// completes the step unmeasured and is counted.
    case extensionResponse(id: String, feature: ExtensionFeature)
    /// The echo of our available presence (RFC 6121 §4.2.2), for at most `presenceEchoWait`.
    case ownPresence
    /// Our self-presence from the room (`RoomMembership.joinAnswer`).
    case mucJoin(room: String)
    /// A stanza matching the `wait` step at `pc` (its condition stays in the shared script).
    case stanza
    /// A think time's wake-up.
    case timer
    /// Nothing but the run's end.
    case stayOnline

    /// How long the presence step waits for its echo at most (less when the step's timeout is
    /// shorter). A server that echoes does so within a round trip; one that never does (jabberd2)
    /// would otherwise hold every session for the whole step timeout. 2 s is ten times the slowest echo
    /// seen on a saturated Prosody (login.yaml, 500 logins in 5 s on this 2-core machine, login p99
    /// 3.8 s: presence p50 46 ms, p99 119 ms, max 208 ms), yet short enough that a session on a silent
    /// server reaches its next step soon; an echo later than this is counted (`presence_echo_late`).
    static let presenceEchoWait = Duration.seconds(2)

    /// True for the rows that wait for the server (their timeout is armed again after a resumption).
    var awaitsServer: Bool {
        switch self {
        case .iqResponse, .extensionResponse, .ownPresence, .mucJoin, .stanza: return true
        case .nothing, .timer, .stayOnline: return false
        }
    }

    /// How long this row waits for a step whose own timeout is `stepTimeout`.
    func timeout(for stepTimeout: Duration) -> Duration {
        self == .ownPresence ? min(stepTimeout, Self.presenceEchoWait) : stepTimeout
    }

    /// What the timeout of a step waiting here means.
    enum TimedOut: Equatable {
        /// The step fails with this error.
        case failed(SessionError)
        /// No echo within the bounded wait: the presence was sent and the session is available; the
        /// step completes unmeasured and the run counts the silent server (`presence_echo_missing`).
        case echoMissing
    }

    func timedOut(step name: String) -> TimedOut {
        self == .ownPresence ? .echoMissing : .failed(.stepTimeout(step: name))
    }

    /// What an arriving stanza does to the step waiting here.
    enum Answer: Equatable {
        /// The step completes, timed.
        case completed
        /// The echo of our presence: the session is a message target now; the step completes, timed.
        case echoed
        /// The server does not support the extension: counted under `Counter`, completes unmeasured.
        case unsupported(Counter)
        /// The server refused: the step fails; the error's `<text/>` is its kind's example.
        case refused(SessionError, text: String?)
        /// Our presence was refused: not a message target after all; the step fails.
        case presenceRefused(SessionError, text: String?)
        /// An answer to a MUC join in flight.
        case room(RoomMembership.JoinAnswer)
    }

    /// The meaning of `stanza` for the step waiting here; nil when it does not answer it.
    /// `boundJID`: the session's full JID; `room`: its room; `matchesWait`: whether the stanza matches
    /// the current `wait` step's condition.
    func answer(
        to stanza: XMLElement, boundJID: String?, room: RoomMembership?, matchesWait: (XMLElement) -> Bool
    ) -> Answer? {
        switch self {
        case .iqResponse(let id):
            guard stanza.name == "iq", stanza.attribute("id") == id else { return nil }
            return stanza.attribute("type") == "result" ? .completed : Self.refusal(stanza)
        case .extensionResponse(let id, let feature):
            guard stanza.name == "iq", stanza.attribute("id") == id else { return nil }
            if stanza.attribute("type") == "result" { return .completed }
            if ExtensionRequests.unsupportedConditions.contains(Stanza.stanzaCondition(stanza)) {
                return .unsupported(ExtensionRequests.unsupportedCounter(feature))
            }
            return Self.refusal(stanza)
        case .ownPresence:
            guard stanza.name == "presence", stanza.attribute("from") == boundJID else { return nil }
            guard stanza.attribute("type") == "error" else { return .echoed }
            let condition = Stanza.stanzaCondition(stanza)
            return .presenceRefused(.stanzaError(condition: condition), text: SessionError.serverText(of: stanza))
        case .mucJoin:
            return room?.joinAnswer(stanza).map { .room($0) }
        case .stanza:
            return matchesWait(stanza) ? .completed : nil
        case .nothing, .timer, .stayOnline:
            return nil
        }
    }

    private static func refusal(_ stanza: XMLElement) -> Answer {
        .refused(.stanzaError(condition: Stanza.stanzaCondition(stanza)), text: SessionError.serverText(of: stanza))
    }
}
