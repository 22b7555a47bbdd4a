// XEP-0198 stream management as a session feature: enable, acks, suspend and resume.
import LoadProfile
import LoadResults
import XMPPCore

/// One session's XEP-0198 stream management while the profile asks for it and the server granted
/// it: the acks bookkeeping (every stanza the session sent is queued until acknowledged, an ack is
/// requested every `request_every` stanzas, the server's `<r/>` answered), and what a resumption
/// needs (whether the next connection resumes, where — the server's `location` —, how many tries).
/// Boxed (one pointer in the machine) because most profiles never use it.
///
/// It decides what each stream-management element means and whether a drop is resumed; the program,
/// presence and room keep their own state across the drop and go on when the machine says the
/// stream was resumed.
final class StreamManagementFeature {
    var state = StreamManagementState()
    /// The next connection resumes this stream (set when a drop suspends the session).
    private(set) var isResuming = false
    /// Resumption attempts in a row since the drop.
    private(set) var resumeAttempts = 0
    /// Where in the current event's actions queueing starts (after the `<enable/>`, when stream
    /// management was turned on during the event; 0 otherwise).
    private var queueStart = 0

    /// Stanzas sent in this event before `index` (before stream management was on) are not queued.
    func queueFrom(_ index: Int) { queueStart = index }

    /// Where this event's queueing starts; the next event starts at 0.
    func takeQueueStart() -> Int {
        defer { queueStart = 0 }
        return queueStart
    }

    /// After a fresh login: a feature when the profile asks and the server offers it (and the
    /// `<enable/>` goes out); asked for but not offered is counted (`sm_not_offered`), never silent.
    /// With `inline` (Bind2 carried the `<enable/>`, XEP-0386) the server's answer is taken as if it
    /// had answered an `<enable/>` sent right after binding: a grant makes the feature (nothing is
    /// sent), a refusal is counted as the classic `<failed/>` is; no answer falls back to the classic
    /// `<enable/>` where the features offer it.
    static func enable(offered: Bool, inline: InlineStreamManagement? = nil, _ s: inout SessionShared) -> StreamManagementFeature? {
        guard let settings = s.script.streamManagement else { return nil }
        switch inline {
        case .enabled(_, let grant):
            let feature = StreamManagementFeature()
            feature.state.enabled(grant)
            return feature
        case .failed(let condition):
            s.record(.error(kind: SessionNotice.streamManagementRefused(condition: condition).kind))
            return nil
        case .unanswered, nil:
            break
        }
        guard offered else {
            s.count(.streamManagementNotOffered)
            return nil
        }
        // Not a stanza: neither counted nor queued.
        s.actions.append(.send(StreamManagementState.enable(resume: settings.resume)))
        return StreamManagementFeature()
    }

    /// What an element of the stream-management namespace means for the session.
    enum Received: Equatable {
        /// Bookkeeping only (`<enabled/>`, a valid `<a/>`), or an answer sent.
        case handled
        /// Stream management is off for this session from now on (counted as this error kind).
        case off(errorKind: String)
        /// Not something the server should send us (counted as unexpected).
        case unexpected
    }

    func received(_ element: XMLElement, _ s: inout SessionShared) -> Received {
        switch element.name {
        case "enabled":
            state.enabled(StreamManagementState.grant(in: element))
            return .handled
        case "r":
            s.actions.append(.send(state.answer()))
            return .handled
        case "a":
            guard let h = StreamManagementState.handledCount(in: element), state.acknowledge(h) != nil else {
                return .off(errorKind: SessionNotice.streamManagementBadAck.kind)
            }
            return .handled
        case "failed":
            return .off(errorKind: SessionNotice.streamManagementRefused(condition: Stanza.stanzaCondition(element)).kind)
        default:
            return .unexpected
        }
    }

    /// Queues what an event sent (from `start` in `actions`) until acknowledged: stamped messages
    /// become elements (the resend queue keeps elements), and an ack request follows every
    /// `requestEvery` stanzas.
    func queue(_ actions: inout [SessionAction], from start: Int, requestEvery: Int) {
        var index = start
        while index < actions.count {
            let element: XMLElement
            switch actions[index] {
            case .send(let sent): element = sent
            case .sendMessage(let message):
                element = message.element
                actions[index] = .send(element)
            default:
                index += 1
                continue
            }
            index += 1
            if StreamManagementState.isStanza(element), state.didSend(element, requestEvery: requestEvery) {
                actions.insert(.send(StreamManagementState.request), at: index)
                index += 1
            }
        }
    }

    /// A stanza from the server: one more for our `h`.
    func receivedStanza(_ element: XMLElement) {
        guard StreamManagementState.isStanza(element) else { return }
        state.didReceiveStanza()
    }

    /// Whether a drop with `error` suspends the session for resumption: the server granted it, the
    /// profile wants it, the run goes on, and fewer than `attempts` (the reconnect policy's, or 3)
    /// were tried in a row; `loggingIn`: the drop came while (re)connecting, which only a resuming
    /// session survives.
    func shouldResume(after error: SessionError, running: Bool, loggingIn: Bool, stopping: Bool, _ s: SessionShared) -> Bool {
        let attempts = s.script.reconnect.isEnabled ? s.script.reconnect.attempts : 3
        guard s.script.streamManagement?.resume == true, !stopping, error.isConnectionDrop, state.canResume, resumeAttempts < attempts
        else { return false }
        return running || (loggingIn && isResuming)
    }

    /// The session is suspended: the next login resumes the stream; returns the try's number.
    func suspend() -> Int {
        isResuming = true
        resumeAttempts += 1
        return resumeAttempts
    }

    /// The server resumed our stream: the stanzas to send again (those it did not handle), or nil
    /// when its `<resumed/>` had no valid `h`.
    func resumed(_ element: XMLElement) -> [XMLElement]? {
        guard let h = StreamManagementState.handledCount(in: element), let resend = state.resumed(serverHandled: h) else { return nil }
        isResuming = false
        resumeAttempts = 0
        return resend
    }

    /// The `<resume/>` for the login of a resuming connection, nil for a fresh login.
    var resumeRequest: XMLElement? { isResuming ? state.resume() : nil }

    /// Where a resuming connection goes: the server's `location` ("host" or "host:port"), when given.
    var resumeLocation: String? { isResuming ? state.grant?.location : nil }

    /// Stanzas sent and never acknowledged (given up when the stream cannot be resumed).
    var unacknowledgedCount: UInt64 { UInt64(state.unacknowledged.count) }
}
