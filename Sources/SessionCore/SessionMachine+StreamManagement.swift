// XEP-0198 in the session's life: enabling it, routing its elements, suspending and resuming streams.
import LoadProfile
import LoadResults
import XMPPCore

/// XEP-0198 stream management: enable after login, answer `<r/>`, ask for acks (`send`), and on a
/// drop resume the stream (keeping the program where it was) before falling back to a fresh login.
/// The bookkeeping is `StreamManagementSession`'s; this is where it meets the session's stages.
extension SessionMachine {
    /// After a fresh login: enable stream management when the profile asks and the server offers it;
    /// asked for but not offered is counted (`sm_not_offered`), never silent.
    mutating func enableStreamManagement(offered: Bool) {
        guard let settings = script.streamManagement, offered else {
            if script.streamManagement != nil { record(.count(.streamManagementNotOffered)) }
            streamManagement = nil
            return
        }
        streamManagement = StreamManagementSession()
        // Not a stanza: neither counted nor queued.
        pending.append(.send(StreamManagementState.enable(resume: settings.resume)))
    }

    /// An element of the stream-management namespace.
    mutating func streamManagementReceived(_ element: XMLElement) {
        guard let session = streamManagement else { return record(.count(.unexpectedStanzas)) }
        switch session.received(element) {
        case .handled:
            break
        case .answer(let answer):
            pending.append(.send(answer))
        case .badAck:
            record(.error(kind: SessionNotice.streamManagementBadAck.kind))
            streamManagement = nil
        case .refused(let condition):
            record(.error(kind: SessionNotice.streamManagementRefused(condition: condition).kind))
            streamManagement = nil
        case .unexpected:
            record(.count(.unexpectedStanzas))
        }
    }

    /// Whether a drop with `error` suspends the session for resumption instead of ending or
    /// reconnecting it: the server granted resumption, the profile wants it, the run goes on, and
    /// attempts remain (the reconnect policy's, or 3 when the profile has none).
    func shouldResume(after error: SessionError) -> Bool {
        guard let session = streamManagement, script.streamManagement?.resume == true, !stopRequested, !host.isStopping,
            error.isConnectionDrop, session.mayResume(attempts: script.reconnect.isEnabled ? script.reconnect.attempts : 3)
        else { return false }
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

    /// Where a resuming connection goes: the server's `location` ("host" or "host:port"), when given.
    public var resumeLocation: String? { streamManagement?.resumeLocation }

    /// The server resumed our stream: resend what it did not handle, and carry on where we were.
    mutating func resumed(_ element: XMLElement) {
        guard let session = streamManagement, let h = StreamManagementState.handledCount(in: element),
            let resend = session.state.resumed(serverHandled: h)
        else { return end(.login(.protocolViolation("<resumed/> without a valid 'h'"))) }
        var progress: LoginProgress?
        if case .loggingIn(let current) = stage { progress = current }
        stage = .running
        recordLogin(progress)
        record(.count(.sessionsResumed))
        reconnect.loggedIn()
        session.isResuming = false
        session.resumeAttempts = 0
        pending.append(.stageChanged(from: .connecting, to: .online))
        if session.wasAvailable { pending.append(.setOnline(true)) }
        timeout = nil
        armKeepAlive()
        for stanza in resend { send(stanza) }
        // The program goes on where the drop left it: a think time still running is armed again, a
        // step waiting for an answer gets its timeout again (the answer comes on the resumed stream).
        if let due = session.suspendedThink {
            session.suspendedThink = nil
            if due > now { return armWake(at: due, .think(due: due)) }
            waiting = .nothing
            program.advanceToNext(intended: due)
        }
        if waiting == .nothing { return runProgram() }
        if waiting.awaitsServer {
            let instruction = script.instructions[program.pc]
            armTimeout(after: instruction.timeout, .step(name: instruction.name))
        }
    }

    /// The server refused to resume: what it never acknowledged is counted (lost unless delivered
    /// anyway), the connection's state is forgotten, and the login goes on with a fresh bind.
    mutating func resumeFailed() {
        if let session = streamManagement { record(.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount)) }
        record(.count(.sessionsResumeFailed))
        streamManagement = nil
        forgetProgramState()
    }
}
