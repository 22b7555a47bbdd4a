// XEP-0198 on the connection: enable, acks, suspend and resume.
import LoadProfile
import LoadResults
import XMPPCore

/// Stream management on the connection: enable after login, answer `<r/>` (acks are requested in
/// `SessionContext.send`), and on a drop suspend the session so the next login resumes the stream —
/// the program stays where it was — before falling back to a fresh login.
extension ConnectionLife {
    /// After a fresh login: enable stream management when the profile asks and the server offers it;
    /// asked for but not offered is counted (`sm_not_offered`), never silent.
    func enableStreamManagement(offered: Bool, _ c: inout SessionContext) {
        guard let settings = c.script.streamManagement, offered else {
            if c.script.streamManagement != nil { c.record(.count(.streamManagementNotOffered)) }
            c.streamManagement = nil
            return
        }
        c.streamManagement = StreamManagementSession()
        // Not a stanza: neither counted nor queued.
        c.pending.append(.send(StreamManagementState.enable(resume: settings.resume)))
    }

    /// An element of the stream-management namespace while logged in.
    func streamManagementReceived(_ element: XMLElement, _ c: inout SessionContext) {
        guard let session = c.streamManagement else { return c.record(.count(.unexpectedStanzas)) }
        switch session.received(element) {
        case .handled: break
        case .answer(let answer): c.pending.append(.send(answer))
        case .badAck:
            c.record(.error(kind: SessionNotice.streamManagementBadAck.kind))
            c.streamManagement = nil
        case .refused(let condition):
            c.record(.error(kind: SessionNotice.streamManagementRefused(condition: condition).kind))
            c.streamManagement = nil
        case .unexpected: c.record(.count(.unexpectedStanzas))
        }
    }

    /// Whether a drop with `error` suspends the session for resumption instead of ending or
    /// reconnecting it: the server granted resumption, the profile wants it, the run goes on, and
    /// attempts remain (the reconnect policy's, or 3 when the profile has none).
    func shouldResume(after error: SessionError, _ c: SessionContext) -> Bool {
        let attempts = c.script.reconnect.isEnabled ? c.script.reconnect.attempts : 3
        guard let session = c.streamManagement, c.script.streamManagement?.resume == true, !c.isStopping, error.isConnectionDrop,
            session.mayResume(attempts: attempts)
        else { return false }
        switch stage {
        case .running: return true
        case .connecting, .loggingIn: return session.isResuming
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// Closes the connection and arms the back-off like a reconnect, but keeps the program, the room
    /// and the unacknowledged stanzas: the next login resumes the stream. `wasAvailable` and
    /// `suspendedThink` are the program's, kept for when it goes on.
    mutating func suspendForResumption(after error: SessionError, wasAvailable: Bool, suspendedThink: SessionInstant?, _ c: inout SessionContext) {
        guard let session = c.streamManagement else { return }
        if isRunning {
            session.wasAvailable = wasAvailable
            session.suspendedThink = suspendedThink
        }
        session.isResuming = true
        session.resumeAttempts += 1
        leaveConnection(after: error, attempt: session.resumeAttempts, &c)
    }

    /// The server resumed our stream: resend what it did not handle; the program goes on.
    mutating func resumed(_ element: XMLElement, _ c: inout SessionContext) {
        guard let session = c.streamManagement, let h = StreamManagementState.handledCount(in: element),
            let resend = session.state.resumed(serverHandled: h)
        else {
            c.request = .end(.login(.protocolViolation("<resumed/> without a valid 'h'")))
            return
        }
        var progress: LoginProgress?
        if case .loggingIn(let current) = stage { progress = current }
        stage = .running
        recordLogin(progress, &c)
        c.record(.count(.sessionsResumed))
        reconnect.loggedIn()
        session.isResuming = false
        session.resumeAttempts = 0
        c.pending.append(.stageChanged(from: .connecting, to: .online))
        if session.wasAvailable { c.pending.append(.setOnline(true)) }
        c.timeout = nil
        armKeepAlive(&c)
        for stanza in resend { c.send(stanza) }
        c.request = .resumeProgram
    }

    /// The server refused to resume: what it never acknowledged is counted (lost unless delivered
    /// anyway) and the login goes on with a fresh bind (the program starts again after it).
    func resumeFailed(_ c: inout SessionContext) {
        if let session = c.streamManagement { c.record(.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount)) }
        c.record(.count(.sessionsResumeFailed))
        c.streamManagement = nil
        c.boundJID = nil
    }
}
