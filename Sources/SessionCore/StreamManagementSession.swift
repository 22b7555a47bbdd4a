// One session's XEP-0198 stream management: acks bookkeeping and what a resumption must restore.
import LoadProfile
import LoadResults
import XMPPCore

/// One session's XEP-0198 state while stream management is on: the acks bookkeeping and what a
/// resumption must restore. Boxed (one pointer in the machine) because most profiles never use it.
///
/// It says what each stream-management element means and what to send back; the machine routes.
final class StreamManagementSession {
    var state = StreamManagementState()
    /// The next connection resumes this stream (set when a drop suspends the session).
    var isResuming = false
    /// Resumption attempts in a row since the drop.
    var resumeAttempts = 0
    /// Our presence was available when the connection dropped (others may target us again after).
    var wasAvailable = false
    /// The think time pending when the connection dropped (its due instant), restored after resuming.
    var suspendedThink: SessionInstant?

    /// What an element of the stream-management namespace means.
    enum Received: Equatable {
        /// Bookkeeping only (`<enabled/>`, a valid `<a/>`).
        case handled
        /// Send this answer (`<a h=…/>` to the server's `<r/>`).
        case answer(XMLElement)
        /// An `<a/>` without a valid `h`: stream management is off for this session, counted.
        case badAck
        /// `<failed/>` with this condition: stream management is off for this session, counted.
        case refused(condition: String)
        /// Not something the server should send us.
        case unexpected
    }

    func received(_ element: XMLElement) -> Received {
        switch element.name {
        case "enabled":
            state.enabled(StreamManagementState.grant(in: element))
            return .handled
        case "r":
            return .answer(state.answer())
        case "a":
            guard let h = StreamManagementState.handledCount(in: element), state.acknowledge(h) != nil else { return .badAck }
            return .handled
        case "failed":
            return .refused(condition: Stanza.stanzaCondition(element))
        default:
            return .unexpected
        }
    }

    /// A stanza we send: queued until acknowledged; returns the ack request to send after it, every
    /// `requestEvery` stanzas.
    func sent(_ element: XMLElement, requestEvery: Int) -> XMLElement? {
        guard StreamManagementState.isStanza(element) else { return nil }
        return state.didSend(element, requestEvery: requestEvery) ? StreamManagementState.request : nil
    }

    /// A stanza from the server: one more for our `h`.
    func receivedStanza(_ element: XMLElement) {
        guard StreamManagementState.isStanza(element) else { return }
        state.didReceiveStanza()
    }

    /// Whether another resumption may be tried: the server granted it and fewer than `attempts` (the
    /// reconnect policy's, or 3 when the profile has none) were tried in a row.
    func mayResume(attempts: Int) -> Bool { state.canResume && resumeAttempts < attempts }

    /// The `<resume/>` for the login of a resuming connection, nil for a fresh login.
    var resumeRequest: XMLElement? { isResuming ? state.resume() : nil }

    /// Where a resuming connection goes: the server's `location` ("host" or "host:port"), when given.
    var resumeLocation: String? { isResuming ? state.grant?.location : nil }

    /// Stanzas sent and never acknowledged (given up when the stream cannot be resumed).
    var unacknowledgedCount: UInt64 { UInt64(state.unacknowledged.count) }
}
