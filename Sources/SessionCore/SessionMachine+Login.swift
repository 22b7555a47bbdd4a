// The session's connection life: connecting, driving the login, reconnecting, logging out.
import LoadProfile
import LoadResults
import XMPPCore

extension SessionMachine {
    mutating func start() {
        guard case .idle = stage else { return }
        stage = .connecting
        connectStart = now
        pending.append(.stageChanged(from: .idle, to: .connecting))
        record(.count(.sessionsStarted))
        armTimeout(after: script.loginTimeout, .login)
        pending.append(.connect)
    }

    mutating func connected() {
        if case .loggingIn(let progress) = stage, progress.awaitsFreshConnection {
            // The account was registered on the previous stream: authenticate on this one.
            progress.awaitsFreshConnection = false
            progress.machine = LoginMachine(configuration: loginConfiguration(register: false), keyCache: host.keyCache)
            return perform(progress.machine.start())
        }
        guard case .connecting = stage else { return }
        resource = render(script.login.resource)
        let machine = LoginMachine(configuration: loginConfiguration(register: script.login.register), keyCache: host.keyCache)
        let progress = LoginProgress(machine: machine, now: now)
        progress.record(.connect, nanos: now.nanoseconds(since: connectStart))
        stage = .loggingIn(progress)
        perform(progress.machine.start())
    }

    private func loginConfiguration(register: Bool) -> LoginMachine.Configuration {
        var configuration = LoginMachine.Configuration(
            domain: settings.domain, username: identity.username, password: settings.password,
            resource: resource, tls: script.login.tls, mechanism: script.login.mechanism, register: register)
        configuration.deriveKeysElsewhere = true
        configuration.resume = streamManagement?.resumeRequest
        configuration.maxSCRAMIterations = settings.maxSCRAMIterations
        return configuration
    }

    mutating func keyDerived(_ result: Result<SCRAMKeys, SASLError>) {
        guard case .loggingIn(let progress) = stage else { return }
        perform(progress.machine.keyDerived(result))
    }

    mutating func tlsEstablished() {
        guard case .loggingIn(let progress) = stage else { return }
        perform(progress.machine.tlsEstablished())
    }

    /// Performs what the login machine asked for.
    mutating func perform(_ actions: [LoginMachine.Action]) {
        for action in actions {
            if case .ended = stage { return }
            switch action {
            case .openStream: pending.append(.openStream)
            case .restartStream: pending.append(.restartStream)
            case .send(let element): send(element)
            case .startTLS:
                guard settings.tlsAvailable else { return end(.tlsUnavailable) }
                pending.append(.startTLS)
            case .enterPhase(let next):
                if case .loggingIn(let progress) = stage { progress.enter(next, now: now) }
            case .unexpected(_, let reply):
                record(.count(.unexpectedStanzas))
                if let reply { send(reply) }
            case .registered(let created):
                record(.count(created ? .accountsCreated : .accountsExisted))
            case .authenticateOnFreshStream:
                // Close this stream and connection; `connected()` starts the authenticating login on the
                // next one (the login timeout keeps running: it covers both streams).
                guard case .loggingIn(let progress) = stage else { return }
                progress.enter(.connect, now: now)
                progress.awaitsFreshConnection = true
                pending.append(contentsOf: [.closeStream, .close, .connect])
            case .loggedIn(let jid):
                guard case .loggingIn(let progress) = stage else { return }
                if let probe {
                    pending.append(
                        .learned(ServerFacts(streamFeatures: probe.offeredFeatures, saslMechanism: progress.machine.chosenMechanism?.name)))
                }
                loggedIn(jid: jid, progress: progress)
            case .resumed(let element): resumed(element)
            case .resumeFailed: resumeFailed()
            case .fail(let error): end(.login(error))
            case .deriveKey(let request):
                // PBKDF2 (up to the iteration cap) runs on a worker thread, never on the event loop.
                pending.append(.deriveKey(request))
            }
        }
    }

    private mutating func loggedIn(jid: String, progress: LoginProgress) {
        boundJID = jid
        stage = .running
        recordLogin(progress)
        record(.count(reconnect.isReconnecting ? .sessionsReconnected : .sessionsLoggedIn))
        reconnect.loggedIn()
        pending.append(.stageChanged(from: .connecting, to: .online))
        timeout = nil
        keepAlive.forgetPending()
        armKeepAlive()
        enableStreamManagement(offered: progress.machine.offersStreamManagement)
        offersClientState = progress.machine.offersClientState
        if let probe { for query in probe.queries(domain: settings.domain, now: now) { send(query) } }
        // The login instruction completed; the next step is due now.
        program.advance(to: script.firstInstructionAfterLogin, intended: now)
        runProgram()
    }

    /// Records a login (or resumption) that succeeded: its phases, `login`, and `reconnect.login` when
    /// it was a reconnect.
    mutating func recordLogin(_ progress: LoginProgress?) {
        if let progress {
            progress.enter(nil, now: now)
            progress.appendPhases(settings.metrics, node: identity.node, to: &pending)
        }
        recordLatency(settings.metrics.login, from: loginIntended, serviceFrom: connectStart, node: identity.node)
        if reconnect.isReconnecting { recordLatency(settings.metrics.reconnectLogin, from: loginIntended, serviceFrom: connectStart) }
    }

    /// The login phase of a session in `stage`: `connect` while connecting, the login's current phase
    /// while logging in (`connect` before its first phase began); nil otherwise.
    static func loginPhase(of stage: Stage) -> LoginPhase? {
        switch stage {
        case .connecting: return .connect
        case .loggingIn(let progress): return progress.currentPhase ?? .connect
        case .idle, .running, .loggingOut, .awaitingReconnect, .ended: return nil
        }
    }

    /// The login phase the session is in now; nil when not logging in.
    public var loginPhase: LoginPhase? { Self.loginPhase(of: stage) }

    /// A login failed with `error` while the session was in `stage`: counts the failure under its phase
    /// and kind (`login_failures`) and records the phases the login did complete into `login.<phase>`
    /// (the phase it failed in and `login` itself are not). Returns the phase; nil (nothing recorded)
    /// when the session was not connecting or logging in.
    mutating func loginFailed(_ error: SessionError, in stage: Stage) -> LoginPhase? {
        guard let phase = Self.loginPhase(of: stage) else { return nil }
        record(.loginFailure(phase: phase.rawValue, kind: error.kind))
        if case .loggingIn(let progress) = stage { progress.appendPhases(settings.metrics, node: identity.node, to: &pending) }
        return phase
    }

    mutating func serverClosedStream() {
        switch stage {
        case .loggingIn(let progress): perform(progress.machine.streamClosed())
        case .loggingOut(let since): logoutFinished(since: since)
        case .running: end(.streamClosedByServer)
        case .idle, .connecting, .awaitingReconnect, .ended: break
        }
    }

    mutating func connectionLost(_ failure: ConnectionFailure?) {
        switch stage {
        case .loggingOut(let since) where failure == nil: logoutFinished(since: since)
        case .idle, .awaitingReconnect, .ended: break
        default: end(.connection(failure ?? .closed))
        }
    }

    // MARK: - Stopping

    /// Finish the current step, then log out (the run's load phase ended).
    mutating func gracefulStop() {
        stopRequested = true
        guard case .running = stage else {
            if case .idle = stage { end(nil) }
            // Dropped and waiting: the session did not come back. Churned and waiting: our own doing.
            if case .awaitingReconnect(let churned) = stage { end(churned ? nil : .reconnectAbandoned) }
            return
        }
        switch waiting {
        case .stayOnline, .timer, .nothing:
            cancelWake()
            timeout = nil
            waiting = .nothing
            logout()
        default:
            break  // the step in flight finishes first; runProgram then logs out
        }
    }

    mutating func logout() {
        guard case .running = stage else { return }
        stage = .loggingOut(since: now)
        pending.append(.setOnline(false))
        send(Stanza.presence(type: "unavailable"))
        pending.append(.closeStream)
        armTimeout(after: Self.logoutWait, .logout(since: now))
    }

    /// How long a logout waits for the server's `</stream:stream>` (or its close of the connection).
    static let logoutWait = Duration.seconds(5)

    private mutating func logoutFinished(since: SessionInstant) {
        recordLatency(settings.metrics.logout, from: since, serviceFrom: since)
        end(nil)
    }

    // MARK: - Reconnecting

    func shouldReconnect(after error: SessionError) -> Bool {
        guard reconnect.allows(after: error, policy: script.reconnect, stopping: stopRequested || host.isStopping) else { return false }
        switch stage {
        case .connecting, .loggingIn, .running: return true
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// Deliberate churn: a running session closes its connection and comes back as after a drop
    /// (first back-off of its policy, or of the default one), counted as churned, not as an error.
    mutating func churn() {
        guard case .running = stage, !stopRequested, !host.isStopping else { return }
        record(.count(.sessionsChurned))
        reconnect.churned()
        scheduleReconnect(after: nil)
    }

    /// Counts the drop (when it was one), closes the connection, forgets the connection's state (login,
    /// MUC room, the step in flight) and arms the back-off; the program starts again after the next login.
    mutating func scheduleReconnect(after error: SessionError?) {
        forgetProgramState()
        if let session = streamManagement {
            // Resumption was not possible (or is over): what the server never acknowledged is given up.
            record(.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount))
            streamManagement = nil
        }
        leaveConnection(after: error, attempt: reconnect.nextAttempt())
    }

    /// Leaves the current connection after a drop (`error`) or a churn (nil), for a reconnect or a
    /// resumption: counts the drop, takes the session off the targets, forgets the connection's
    /// timers and backpressure, closes, and arms the back-off of the `attempt`-th try in a row.
    mutating func leaveConnection(after error: SessionError?, attempt: Int) {
        if case .running = stage { pending.append(.stageChanged(from: .online, to: .connecting)) }
        if let error { recordError(error) }
        pending.append(.setOnline(false))
        cancelWake()
        timeout = nil
        writeBlocked = false
        keepAlive.forgetPending()
        stage = .awaitingReconnect(churned: error == nil)
        pending.append(.close)
        armWake(at: now + script.reconnect.delay(attempt: attempt, using: &rng), .reconnect)
    }

    /// Forgets what belonged to the lost stream: the bound JID, the room, the step in flight.
    mutating func forgetProgramState() {
        boundJID = nil
        isAvailable = false
        room = nil
        waiting = .nothing
        program.forgetLoops()
    }

    /// The back-off ended: connect and log in again.
    mutating func reconnectNow() {
        guard case .awaitingReconnect = stage else { return }
        record(.count(.sessionsReconnects))
        stage = .connecting
        reconnect.reconnecting()
        loginIntended = now
        connectStart = now
        armTimeout(after: script.loginTimeout, .login)
        pending.append(.connect)
    }
}
