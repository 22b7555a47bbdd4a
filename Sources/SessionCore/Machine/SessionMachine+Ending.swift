// SessionMachine: Closing, stopping, churn, reconnects and the end of a session.
import LoadProfile
import LoadResults
import XMPPCore

extension SessionMachine {
    // MARK: - Closing

    mutating func streamClosed() {
        switch connection.stage {
        case .loggingIn: loginOutcome(login.handle(probe: probe, &shared) { $0.streamClosed() })
        case .loggingOut: if connection.logoutFinished(&shared) { end(nil) }
        case .running: end(.streamClosedByServer)
        case .idle, .connecting, .awaitingReconnect, .ended: break
        }
    }

    mutating func connectionLost(_ failure: ConnectionFailure?) {
        switch connection.stage {
        case .loggingOut where failure == nil: if connection.logoutFinished(&shared) { end(nil) }
        case .idle, .awaitingReconnect, .ended: break
        default: end(.connection(failure ?? .closed))
        }
    }

    // MARK: - Stopping, churn, reconnects and the end

    /// Finish the current step, then log out (the run's load phase ended). A session not running
    /// steps: one that never started ends; one waiting to reconnect gives up (a churned one without
    /// an error); one logging in logs out as soon as it is in.
    mutating func gracefulStop() {
        let droppable = program.stop()
        switch connection.stage {
        case .running: if droppable { connection.logout(&shared) }  // else the step in flight finishes first
        case .idle: end(nil)
        case .awaitingReconnect(let churned): end(churned ? nil : .reconnectAbandoned)
        case .connecting, .loggingIn, .loggingOut, .ended: break
        }
    }

    /// Deliberate churn: a running session closes its connection and comes back as after a drop
    /// (first back-off of its policy, or of the default one), counted as churned, not as an error:
    /// a session whose server granted XEP-0198 resumption (and whose profile resumes) resumes the
    /// stream, as a phone whose network dropped does — unless the run's churn resumes only a share
    /// of them (`churn: {resume: P%}`) and this one is drawn to come back as a restarted app; any
    /// other logs in afresh (with its FAST token where it holds one).
    mutating func churn() {
        guard connection.isRunning, !isStopping else { return }
        shared.count(.sessionsChurned)
        reconnect.churned()
        if let session = streamManagement, shared.script.streamManagement?.resume == true, session.state.canResume,
            reconnect.churnResumes(share: shared.settings.churnResumeShare, shared)
        {
            return leaveConnection(after: nil, attempt: session.suspend())
        }
        forgetStream()
        scheduleReconnect(after: nil)
    }

    /// What belonged to the lost stream goes: the program's step in flight and loops, presence, the
    /// room, the bound JID.
    mutating func forgetStream() {
        program.forget()
        presence.forget()
        roster.forget()
        query.forget()
        muc.forget()
        login.forget()
    }

    /// Counts the drop (or churn: `error` nil), gives up what stream management never got
    /// acknowledged, closes the connection and arms the back-off; the program starts again after the
    /// next login.
    mutating func scheduleReconnect(after error: SessionError?) {
        if let session = streamManagement {
            shared.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount)
            streamManagement = nil
        }
        leaveConnection(after: error, attempt: reconnect.nextAttempt())
    }

    /// Leaves the connection after a drop (`error`) or a churn (nil) and arms the back-off of the
    /// `attempt`-th try in a row.
    mutating func leaveConnection(after error: SessionError?, attempt: Int) {
        if let error { shared.recordError(error, node: connection.node(shared)) }
        connection.leave(churned: error == nil, &shared)
        keepAlive.forget()
        login.dropConnection()
        reconnect.backOff(attempt: attempt, shared)
    }

    /// The back-off ended: connect and log in again (resuming where the server said, if it did).
    mutating func reconnectNow() {
        guard case .awaitingReconnect = connection.stage else { return }
        shared.count(.sessionsReconnects)
        login.connecting(intended: shared.now, &shared)
        _ = connection.reconnecting(resumeLocation: streamManagement?.resumeLocation, &shared)
    }

    /// Ends the session once: records the outcome, frees the account, closes the connection — unless
    /// the error is a drop that stream management resumes or the reconnect policy covers, which closes
    /// the connection and arms the back-off instead.
    mutating func end(_ error: SessionError?) {
        guard !connection.isEnded else { return }
        var failure: SessionFailure?
        if let error {
            let phase = loginPhase
            if let phase { login.failed(error, in: phase, node: connection.node(shared), &shared) }
            failure = SessionFailure(error: error, loginPhase: phase)
        }
        if let error, let session = streamManagement,
            session.shouldResume(
                after: error, running: connection.isRunning, loggingIn: connection.stage == .connecting || connection.isLoggingIn,
                stopping: isStopping, shared)
        {
            return leaveConnection(after: error, attempt: session.suspend())
        }
        if let error, connection.mayReconnect, reconnect.allows(after: error, policy: shared.script.reconnect, stopping: isStopping) {
            forgetStream()
            return scheduleReconnect(after: error)
        }
        // The timers go before the end is said: nothing is armed for an ended session.
        let armed = timers
        reconnect.cancel()
        keepAlive.forget()
        login.forget()
        if armed.coarse != nil { shared.actions.append(.cancelTimeout) }
        if armed.precise != nil { shared.actions.append(.cancelWake) }
        _ = connection.finish(error, failure: failure, &shared)
    }
}
