import LoadProfile
import LoadResults
import XMPPCore

/// One session's XEP-0198 state while stream management is on: the acks bookkeeping and what a
/// resumption must restore. Boxed (one pointer in the machine) because most profiles never use it.
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
}

/// XEP-0198 stream management: enable after login, answer `<r/>`, ask for acks, and on a drop resume
/// the stream (keeping the program where it was) before falling back to a fresh login.
extension SessionMachine {
    /// After a fresh login: enable stream management when the profile asks and the server offers it;
    /// asked for but not offered is counted (`sm_not_offered`), never silent.
    mutating func enableStreamManagement(offered: Bool) {
        guard let settings = script.streamManagement, offered else {
            if script.streamManagement != nil { host.recorder.increment(.streamManagementNotOffered) }
            streamManagement = nil
            return
        }
        streamManagement = StreamManagementSession()
        // Not a stanza: neither counted nor queued.
        pending.append(.send(StreamManagementState.enable(resume: settings.resume)))
    }

    /// Handles an element of the stream-management namespace; false for anything else.
    mutating func streamManagementReceived(_ element: XMLElement) -> Bool {
        guard element.namespace == XMPPNamespace.streamManagement else { return false }
        guard let session = streamManagement else {
            host.recorder.increment(.unexpectedStanzas)
            return true
        }
        switch element.name {
        case "enabled":
            session.state.enabled(StreamManagementState.grant(in: element))
        case "r":
            pending.append(.send(session.state.answer()))
        case "a":
            guard let h = StreamManagementState.handledCount(in: element), session.state.acknowledge(h) != nil else {
                host.recorder.recordError(kind: SessionNotice.streamManagementBadAck.kind)
                streamManagement = nil
                return true
            }
        case "failed":
            let condition = Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.stanzas)
            host.recorder.recordError(kind: SessionNotice.streamManagementRefused(condition: condition).kind)
            streamManagement = nil
        default:
            host.recorder.increment(.unexpectedStanzas)
        }
        return true
    }

    /// A stanza we send: queued until acknowledged, with an ack request every `request_every` stanzas.
    mutating func streamManagementSent(_ element: XMLElement) {
        guard let session = streamManagement, let settings = script.streamManagement,
            StreamManagementState.isStanza(element)
        else { return }
        if session.state.didSend(element, requestEvery: settings.requestEvery) {
            pending.append(.send(StreamManagementState.request))
        }
    }

    /// A stanza from the server: one more for our `h`.
    func streamManagementReceivedStanza(_ element: XMLElement) {
        guard let session = streamManagement, StreamManagementState.isStanza(element) else { return }
        session.state.didReceiveStanza()
    }

    /// Whether a drop with `error` suspends the session for resumption instead of ending or
    /// reconnecting it: the server granted resumption, the profile wants it, the run goes on, and
    /// attempts remain (the reconnect policy's, or 3 when the profile has none).
    func shouldResume(after error: SessionError) -> Bool {
        guard let session = streamManagement, session.state.canResume, script.streamManagement?.resume == true,
            !stopRequested, !host.isStopping, error.isConnectionDrop
        else { return false }
        let attempts = script.reconnect.isEnabled ? script.reconnect.attempts : 3
        guard session.resumeAttempts < attempts else { return false }
        switch stage {
        case .running: return true
        case .connecting, .loggingIn: return session.isResuming
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// Closes the connection and arms the back-off like a reconnect, but keeps the program, the room
    /// and the unacknowledged stanzas: the next login resumes the stream.
    mutating func suspendForResumption(after error: SessionError) {
        guard let session = streamManagement else { return }
        if case .running = stage {
            session.wasAvailable = isAvailable
            if waiting == .timer, case .think(let due)? = wake { session.suspendedThink = due }
        }
        session.isResuming = true
        session.resumeAttempts += 1
        leaveConnection(after: error, attempt: session.resumeAttempts)
    }

    /// The `<resume/>` for the login of a resuming connection, nil for a fresh login.
    var resumeRequest: XMLElement? {
        guard let session = streamManagement, session.isResuming else { return nil }
        return session.state.resume()
    }

    /// Where a resuming connection goes: the server's `location` ("host" or "host:port"), when given.
    public var resumeLocation: String? {
        guard let session = streamManagement, session.isResuming else { return nil }
        return session.state.grant?.location
    }

    /// The server resumed our stream: resend what it did not handle, and carry on where we were.
    mutating func resumed(_ element: XMLElement) {
        guard let session = streamManagement, let h = StreamManagementState.handledCount(in: element),
            let resend = session.state.resumed(serverHandled: h)
        else { return end(.login(.protocolViolation("<resumed/> without a valid 'h'"))) }
        if case .loggingIn(let progress) = stage { recordPhases(progress, node: identity.node) }
        stage = .running
        recordLatency(settings.metrics.login, from: loginIntended, serviceFrom: connectStart, node: identity.node)
        recordLatency(settings.metrics.reconnectLogin, from: loginIntended, serviceFrom: connectStart)
        host.recorder.increment(.sessionsResumed)
        isReconnecting = false
        reconnectAttempt = 0
        session.isResuming = false
        session.resumeAttempts = 0
        host.sessionStageChanged(from: .connecting, to: .online)
        if session.wasAvailable { host.setOnline(identity.slot, true) }
        timeout = nil
        armKeepAlive()
        for stanza in resend { send(stanza) }
        // The program goes on where the drop left it: a think time still running is armed again, a
        // step waiting for an answer gets its timeout again (the answer comes on the resumed stream).
        if let due = session.suspendedThink {
            session.suspendedThink = nil
            if due > now {
                armWake(at: due, .think(due: due))
                return
            }
            waiting = .nothing
            advance(to: pc + 1, intended: due)
        }
        switch waiting {
        case .nothing:
            runProgram()
        case .iqResponse, .extensionResponse, .ownPresence, .mucJoin, .stanza:
            armTimeout(after: script.instructions[pc].timeout, .step(name: script.instructions[pc].name))
        case .timer, .stayOnline:
            break
        }
    }

    /// The server refused to resume: what it never acknowledged is counted (lost unless delivered
    /// anyway), the connection's state is forgotten, and the login goes on with a fresh bind.
    mutating func resumeFailed() {
        if let session = streamManagement {
            host.recorder.increment(.streamManagementUnacknowledged, by: UInt64(session.state.unacknowledged.count))
        }
        host.recorder.increment(.sessionsResumeFailed)
        streamManagement = nil
        forgetProgramState()
    }
}
