// A session's connection life: connecting, driving the login, logging out, reconnecting, ending.
import LoadProfile
import LoadResults
import XMPPCore

/// A session's life on its connections: connect, log in (driving a `LoginMachine` through
/// `LoginProgress`), stay logged in (keep-alives, the server probe), log out, and after a drop come
/// back under the profile's `reconnect:` policy (`ReconnectState`) or resume the stream
/// (`ConnectionLife+Resumption`). The steps run in `StepRunner`; `SessionMachine` routes between them.
///
/// Timing: the login's corrected latency counts from the arrival's *intended* start (or a reconnect's
/// back-off end), its service latency from the connect; login phases are summed per phase and
/// recorded once the login succeeded (or, when it failed, those it completed).
struct ConnectionLife {
    /// Where the session is.
    enum Stage {
        case idle
        case connecting
        /// Logging in: the login machine and its phase timing, boxed only while they are needed
        /// (an online session pays one enum tag, not the login's ~350 bytes).
        case loggingIn(LoginProgress)
        case running
        case loggingOut(since: SessionInstant)
        /// Dropped after logging in (or churned: `churned` is true); waiting out the back-off.
        case awaitingReconnect(churned: Bool)
        case ended
    }

    /// Changed only by `ConnectionLife` itself (the machine reads it).
    var stage: Stage = .idle
    let intendedStart: SessionInstant
    /// When the current login was due: the arrival's intended start, or a reconnect's back-off end.
    private var loginIntended: SessionInstant
    private var connectStart: SessionInstant
    var reconnect = ReconnectState()
    var keepAlive = KeepAliveFeature()
    /// The server probe of the run's one probing session (nil for every other session).
    var probe: ServerFactsProbe?

    init(intendedStart: SessionInstant) {
        self.intendedStart = intendedStart
        loginIntended = intendedStart
        connectStart = intendedStart
    }

    var isRunning: Bool {
        if case .running = stage { return true }
        return false
    }

    var isEnded: Bool {
        if case .ended = stage { return true }
        return false
    }

    // MARK: - Connecting and logging in

    mutating func start(_ c: inout SessionContext) {
        guard case .idle = stage else { return }
        stage = .connecting
        connectStart = c.now
        c.pending.append(.stageChanged(from: .idle, to: .connecting))
        c.record(.count(.sessionsStarted))
        c.armTimeout(after: c.script.loginTimeout, .login)
        c.pending.append(.connect)
    }

    mutating func connected(_ c: inout SessionContext) {
        if case .loggingIn(let progress) = stage, progress.awaitsFreshConnection {
            // The account was registered on the previous stream: authenticate on this one.
            progress.awaitsFreshConnection = false
            progress.machine = LoginMachine(configuration: Self.loginConfiguration(c, register: false), keyCache: c.host.keyCache)
            return perform(progress.machine.start(), &c)
        }
        guard case .connecting = stage else { return }
        let login = LoginMachine(configuration: Self.loginConfiguration(c, register: c.script.login.register), keyCache: c.host.keyCache)
        let progress = LoginProgress(machine: login, now: c.now)
        progress.record(.connect, nanos: c.now.nanoseconds(since: connectStart))
        stage = .loggingIn(progress)
        perform(progress.machine.start(), &c)
    }

    private static func loginConfiguration(_ c: SessionContext, register: Bool) -> LoginMachine.Configuration {
        var configuration = LoginMachine.Configuration(
            domain: c.settings.domain, username: c.identity.username, password: c.settings.password, resource: c.resource,
            tls: c.script.login.tls, mechanism: c.script.login.mechanism, register: register)
        configuration.deriveKeysElsewhere = true
        configuration.resume = c.streamManagement?.resumeRequest
        configuration.maxSCRAMIterations = c.settings.maxSCRAMIterations
        return configuration
    }

    /// Hands a login event to the login machine (`event` is called only while logging in).
    mutating func login(_ c: inout SessionContext, _ event: (inout LoginMachine) -> [LoginMachine.Action]) {
        guard case .loggingIn(let progress) = stage else { return }
        perform(event(&progress.machine), &c)
    }

    /// Performs what the login machine asked for.
    private mutating func perform(_ actions: [LoginMachine.Action], _ c: inout SessionContext) {
        for action in actions {
            guard c.request == nil, case .loggingIn(let progress) = stage else { return }
            switch action {
            case .openStream: c.pending.append(.openStream)
            case .restartStream: c.pending.append(.restartStream)
            case .send(let element): c.send(element)
            case .startTLS:
                guard c.settings.tlsAvailable else {
                    c.request = .end(.tlsUnavailable)
                    return
                }
                c.pending.append(.startTLS)
            case .enterPhase(let next): progress.enter(next, now: c.now)
            case .unexpected(_, let reply):
                c.record(.count(.unexpectedStanzas))
                if let reply { c.send(reply) }
            case .registered(let created): c.record(.count(created ? .accountsCreated : .accountsExisted))
            case .authenticateOnFreshStream:
                // Close this stream and connection; `connected` starts the authenticating login on the
                // next one (the login timeout keeps running: it covers both streams).
                progress.enter(.connect, now: c.now)
                progress.awaitsFreshConnection = true
                c.pending.append(.closeStream)
                c.pending.append(.close)
                c.pending.append(.connect)
            case .loggedIn(let jid):
                if let probe {
                    c.pending.append(
                        .learned(ServerFacts(streamFeatures: probe.offeredFeatures, saslMechanism: progress.machine.chosenMechanism?.name)))
                }
                loggedIn(jid: jid, progress: progress, &c)
            case .resumed(let element): resumed(element, &c)
            case .resumeFailed: resumeFailed(&c)
            case .fail(let error): c.request = .end(.login(error))
            case .deriveKey(let request):
                // PBKDF2 (up to the iteration cap) runs on a worker thread, never on the event loop.
                c.pending.append(.deriveKey(request))
            }
        }
    }

    private mutating func loggedIn(jid: String, progress: LoginProgress, _ c: inout SessionContext) {
        c.boundJID = jid
        stage = .running
        recordLogin(progress, &c)
        c.record(.count(reconnect.isReconnecting ? .sessionsReconnected : .sessionsLoggedIn))
        reconnect.loggedIn()
        c.pending.append(.stageChanged(from: .connecting, to: .online))
        c.timeout = nil
        keepAlive.forgetPending()
        armKeepAlive(&c)
        enableStreamManagement(offered: progress.machine.offersStreamManagement, &c)
        c.offersClientState = progress.machine.offersClientState
        if let probe { for query in probe.queries(domain: c.settings.domain, now: c.now) { c.send(query) } }
        c.request = .startProgram
    }

    /// Records a login (or resumption) that succeeded: its phases, `login`, and `reconnect.login` when
    /// it was a reconnect.
    mutating func recordLogin(_ progress: LoginProgress?, _ c: inout SessionContext) {
        if let progress {
            progress.enter(nil, now: c.now)
            progress.appendPhases(c.settings.metrics, node: c.identity.node, to: &c.pending)
        }
        c.recordLatency(c.settings.metrics.login, from: loginIntended, serviceFrom: connectStart, node: c.identity.node)
        if reconnect.isReconnecting { c.recordLatency(c.settings.metrics.reconnectLogin, from: loginIntended, serviceFrom: connectStart) }
    }

    /// The login phase the session is in: `connect` while connecting, the login's current phase while
    /// logging in (`connect` before its first phase began); nil otherwise.
    var loginPhase: LoginPhase? {
        switch stage {
        case .connecting: return .connect
        case .loggingIn(let progress): return progress.currentPhase ?? .connect
        case .idle, .running, .loggingOut, .awaitingReconnect, .ended: return nil
        }
    }

    /// A login failed with `error`: counts the failure under its phase and kind (`login_failures`)
    /// and records the phases the login did complete into `login.<phase>` (not the phase it failed in,
    /// nor `login`). Returns the phase; nil (nothing recorded) when the session was not logging in.
    func loginFailed(_ error: SessionError, _ c: inout SessionContext) -> LoginPhase? {
        guard let phase = loginPhase else { return nil }
        c.record(.loginFailure(phase: phase.rawValue, kind: error.kind))
        if case .loggingIn(let progress) = stage { progress.appendPhases(c.settings.metrics, node: c.identity.node, to: &c.pending) }
        return phase
    }

    // MARK: - Closing

    mutating func serverClosedStream(_ c: inout SessionContext) {
        switch stage {
        case .loggingIn(let progress): perform(progress.machine.streamClosed(), &c)
        case .loggingOut(let since): logoutFinished(since: since, &c)
        case .running: c.request = .end(.streamClosedByServer)
        case .idle, .connecting, .awaitingReconnect, .ended: break
        }
    }

    mutating func connectionLost(_ failure: ConnectionFailure?, _ c: inout SessionContext) {
        switch stage {
        case .loggingOut(let since) where failure == nil: logoutFinished(since: since, &c)
        case .idle, .awaitingReconnect, .ended: break
        default: c.request = .end(.connection(failure ?? .closed))
        }
    }

    /// The run's load phase ended while the session is not running steps: one that never started
    /// ends; one waiting to reconnect gives up (a churned one without an error).
    mutating func stopWhileNotRunning(_ c: inout SessionContext) {
        if case .idle = stage { c.request = .end(nil) }
        if case .awaitingReconnect(let churned) = stage { c.request = .end(churned ? nil : .reconnectAbandoned) }
    }

    mutating func logout(_ c: inout SessionContext) {
        guard case .running = stage else { return }
        stage = .loggingOut(since: c.now)
        c.pending.append(.setOnline(false))
        c.send(Stanza.presence(type: "unavailable"))
        c.pending.append(.closeStream)
        c.armTimeout(after: Self.logoutWait, .logout(since: c.now))
    }

    /// How long a logout waits for the server's `</stream:stream>` (or its close of the connection).
    static let logoutWait = Duration.seconds(5)

    private mutating func logoutFinished(since: SessionInstant, _ c: inout SessionContext) {
        c.recordLatency(c.settings.metrics.logout, from: since, serviceFrom: since)
        c.request = .end(nil)
    }

    /// The login or logout timeout came due.
    mutating func timedOut(_ purpose: SessionTimeout, _ c: inout SessionContext) {
        switch purpose {
        case .login:
            if case .loggingIn(let progress) = stage {
                c.request = .end(.loginTimeout(phase: progress.currentPhase))
                return
            }
            c.request = .end(.loginTimeout(phase: .connect))
        case .logout:
            // The server neither answered our `</stream:stream>` nor closed the connection within the
            // wait: the session did all it was asked and completes; there is no round trip to time.
            c.record(.count(.logoutsUnanswered))
            c.request = .end(nil)
        case .step:
            break
        }
    }

    /// The session is over: records the outcome (`error` nil: completed), frees the account, closes.
    mutating func finish(_ error: SessionError?, failure: SessionFailure?, _ c: inout SessionContext) {
        let gauge: SessionStage
        switch stage {
        case .idle: gauge = .idle
        case .connecting, .loggingIn, .awaitingReconnect: gauge = .connecting
        case .running, .loggingOut: gauge = .online
        case .ended: return
        }
        stage = .ended
        c.cancelWake()
        c.timeout = nil
        c.pending.append(.stageChanged(from: gauge, to: .ended))
        if let error {
            c.recordError(error)
            c.record(.count(.sessionsFailed))
        } else {
            c.record(.count(.sessionsCompleted))
        }
        // One append each: an array literal here would allocate once per session.
        c.pending.append(.setOnline(false))
        c.pending.append(.releaseAccount)
        // Also while still connecting (a login timeout during a hung connect, or the run's deadline):
        // closing frees the socket now instead of at the connect timeout.
        c.pending.append(.close)
        c.pending.append(.ended(failure: failure))
    }

    // MARK: - Reconnecting

    func shouldReconnect(after error: SessionError, _ c: SessionContext) -> Bool {
        guard reconnect.allows(after: error, policy: c.script.reconnect, stopping: c.isStopping) else { return false }
        switch stage {
        case .connecting, .loggingIn, .running: return true
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// Counts the drop (or churn: `error` nil), gives up what stream management never got acknowledged,
    /// closes the connection and arms the back-off; the program starts again after the next login.
    mutating func scheduleReconnect(after error: SessionError?, _ c: inout SessionContext) {
        if let session = c.streamManagement {
            c.record(.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount))
            c.streamManagement = nil
        }
        leaveConnection(after: error, attempt: reconnect.nextAttempt(), &c)
    }

    /// Leaves the current connection after a drop (`error`) or a churn (nil), for a reconnect or a
    /// resumption: counts the drop, takes the session off the targets, forgets the connection's
    /// timers and backpressure, closes, and arms the back-off of the `attempt`-th try in a row.
    mutating func leaveConnection(after error: SessionError?, attempt: Int, _ c: inout SessionContext) {
        if case .running = stage { c.pending.append(.stageChanged(from: .online, to: .connecting)) }
        if let error { c.recordError(error) }
        c.pending.append(.setOnline(false))
        c.cancelWake()
        c.timeout = nil
        c.writeBlocked = false
        keepAlive.forgetPending()
        stage = .awaitingReconnect(churned: error == nil)
        c.pending.append(.close)
        c.armWake(at: c.now + c.script.reconnect.delay(attempt: attempt, using: &c.rng), .reconnect)
    }

    /// The back-off ended: connect and log in again.
    mutating func reconnectNow(_ c: inout SessionContext) {
        guard case .awaitingReconnect = stage else { return }
        c.record(.count(.sessionsReconnects))
        stage = .connecting
        reconnect.reconnecting()
        loginIntended = c.now
        connectStart = c.now
        c.armTimeout(after: c.script.loginTimeout, .login)
        c.pending.append(.connect)
    }

    func armKeepAlive(_ c: inout SessionContext) {
        guard let settings = c.script.keepAlive else { return }
        c.pending.append(.armKeepAlive(at: c.now + settings.interval))
    }
}
