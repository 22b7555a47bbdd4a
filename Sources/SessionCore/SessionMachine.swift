import LoadProfile
import LoadResults
import XMPPCore

/// One virtual user's whole logic, without I/O: connect, log in (driving a `LoginMachine`), run the
/// compiled profile step by step, answer what the server pushes, log out — as a value that takes
/// events and returns actions.
///
/// The machine decides; the engine's `VirtualUser` acts (writes, timers, closing the connection). It
/// owns no socket, no event loop and no clock: every event carries `now`, the run's monotonic
/// `SessionInstant`, and the machine reads no other time, so tests drive it with plain values and no
/// real time passes. Timeouts, think times, step timing and message stamps all use that one clock.
///
/// Timing: the login's corrected latency counts from the arrival's *intended* start, its service
/// latency from the connect; each later step counts from the time it was due (the end of the
/// previous step plus think time) and from when it actually started. Login phases are summed per
/// phase and recorded once the login succeeded.
///
/// The machine outlives its connections: identity, script position, sequence numbers and counters
/// stay when a connection is lost. `connectionLost` hands the drop to `end`, which decides what
/// follows: with the profile's `reconnect:` policy a session that had logged in waits out its back-off
/// and logs in again; without one, or when the attempts run out, the session ends with the error.
///
/// Invariants: after `.ended` the machine ignores every event; it emits `.ended` exactly once, after
/// recording the outcome and releasing its account; at most one timeout and one wake-up are armed.
public struct SessionMachine {
    /// Who the session is; only `node` changes (`connectingTo(node:)`).
    public private(set) var identity: SessionIdentity
    public let script: SessionScript
    public let settings: SessionSettings
    unowned let host: any SessionHost

    /// Where the session is.
    enum Stage {
        case idle
        case connecting
        /// Logging in: the login machine and its phase timing live in a box only while they are needed
        /// (memory per idle session: an online session pays one enum tag, not the login's ~350 bytes).
        case loggingIn(LoginProgress)
        case running
        case loggingOut(since: SessionInstant)
        /// Dropped after logging in (or churned: `churned` is true); waiting out the reconnect back-off.
        case awaitingReconnect(churned: Bool)
        case ended
    }

    /// What the current step waits for before it completes.
    enum Waiting: Equatable {
        case nothing
        case iqResponse(id: String)
        /// The answer to an extension step's iq (`ExtensionRequests`): an error meaning "unsupported"
        /// completes the step unmeasured.
        case extensionResponse(id: String, feature: ExtensionFeature)
        case ownPresence
        case mucJoin(room: String)
        /// A stanza matching the `wait` step at `pc` (its condition stays in the shared script).
        case stanza
        case timer
        case stayOnline
    }

    /// What the armed timeout means when it comes due.
    enum TimeoutPurpose: Equatable {
        case login
        case step(name: String)
        case logout(since: SessionInstant)
    }

    /// What the armed wake-up means when it comes due.
    enum WakePurpose: Equatable {
        case think(due: SessionInstant)
        case mucJoinRetry
        case reconnect
    }

    struct LoopFrame {
        let start: Int
        var remaining: Int?
        let until: SessionInstant?
    }

    var stage: Stage = .idle
    /// The event being handled happened at this instant (set on entry to `handle`).
    var now: SessionInstant
    /// Actions produced while handling the current event: the caller's buffer while `handle` runs,
    /// empty (no storage) between events.
    var pending: [SessionAction] = []
    var timeout: TimeoutPurpose?
    var wake: WakePurpose?

    // Login
    var resource = ""
    public private(set) var boundJID: String?
    let intendedStart: SessionInstant
    /// When the current login was due: the arrival's intended start, or a reconnect's back-off end.
    var loginIntended: SessionInstant
    var connectStart: SessionInstant
    /// Logged in at least once (only such a session reconnects).
    var hasLoggedIn = false
    /// Reconnects in a row since the last successful login.
    var reconnectAttempt = 0
    /// The login in progress is a reconnect.
    var isReconnecting = false

    // Program
    var pc = 0
    var loops: [LoopFrame] = []
    var waiting: Waiting = .nothing
    /// True while `runProgram` is on the stack: step completions inside it must not re-enter it.
    var isRunningProgram = false
    var stepIntended: SessionInstant
    var stepStart: SessionInstant
    var stopRequested = false
    /// The connection's socket stopped draining: no new step starts until it drains (backpressure).
    var writeBlocked = false
    var rng: SeededGenerator
    var messageSequence: UInt32 = 0
    var requestCounter: UInt32 = 0
    /// The MUC room we are in or joining (nil: none; boxed, most sessions never join one).
    var room: RoomMembership?
    /// This session asks the server about itself once (XEP-0092, disco#info) and reports what its login
    /// saw (stream features, SASL mechanism) for the run's manifest: one session per run.
    public var probesServer = false
    /// Stream features offered during the login (only while probing).
    var offeredFeatures: [ServerFacts.StreamFeature] = []
    /// The version and disco#info queries went out (once per session, not again after a reconnect).
    var hasProbed = false
    /// The id and send time of our keep-alive ping awaiting its answer.
    var keepAlivePending: (id: String, sentAt: SessionInstant)?
    /// Our available presence was sent (others may pick us as a `to: random` target).
    var isAvailable = false
    /// The presence step completed without its echo; an echo arriving now is counted as late.
    var presenceEchoOverdue = false
    /// The server answered a keep-alive ping with an error (no XEP-0199): whitespace keep-alives
    /// from then on, for the rest of the session's life (reconnects included).
    var keepAliveFallsBackToWhitespace = false
    /// The features after authentication offered XEP-0352 client state indication.
    var offersClientState = false
    /// XEP-0198 state, while the profile asks for stream management and the server granted it.
    var streamManagement: StreamManagementSession?

    /// - Parameters:
    ///   - intendedStart: when the load model planned this arrival (the origin of the corrected login
    ///     latency).
    ///   - generator: the session's own seeded generator (think times, choices, targets).
    public init(
        identity: SessionIdentity, script: SessionScript, settings: SessionSettings,
        host: any SessionHost, generator: SeededGenerator, intendedStart: SessionInstant
    ) {
        self.identity = identity
        self.script = script
        self.settings = settings
        self.host = host
        self.rng = generator
        self.intendedStart = intendedStart
        self.now = intendedStart
        self.loginIntended = intendedStart
        self.connectStart = intendedStart
        self.stepIntended = intendedStart
        self.stepStart = intendedStart
    }

    /// True once the session ended.
    public var isEnded: Bool {
        if case .ended = stage { return true }
        return false
    }

    /// True while logged in and running its steps (not logging out).
    public var isRunning: Bool {
        if case .running = stage { return true }
        return false
    }

    // MARK: - Events

    /// Takes one event that happened at `now` and returns what to do, in order.
    public mutating func handle(_ event: SessionEvent, now: SessionInstant) -> [SessionAction] {
        var actions: [SessionAction] = []
        handle(event, now: now, into: &actions)
        return actions
    }

    /// Takes one event that happened at `now` and appends what to do, in order, to `actions`, growing
    /// the caller's storage: a caller that hands the same emptied buffer back each time (the virtual
    /// user takes one from its loop) allocates no array per event, and the machine keeps none between
    /// events, so an idle session holds no action storage.
    public mutating func handle(_ event: SessionEvent, now: SessionInstant, into actions: inout [SessionAction]) {
        if case .ended = stage { return }
        self.now = now
        swap(&pending, &actions)
        defer { swap(&pending, &actions) }
        switch event {
        case .start: start()
        case .connected: connected()
        case .connectFailed(let failure): end(.connection(failure))
        case .tlsEstablished: tlsEstablished()
        case .received(let element): received(element)
        case .streamClosed: serverClosedStream()
        case .streamFailed(let error): end(.xml(error))
        case .connectionLost(let failure): connectionLost(failure)
        case .timeoutFired: timeoutFired()
        case .wakeFired: wakeFired()
        case .stop: gracefulStop()
        case .abort(let error): end(error)
        case .writability(let writable): writabilityChanged(writable)
        case .keepAliveFired: keepAliveFired()
        case .churn: churn()
        case .keyDerived(let result): keyDerived(result)
        }
    }

    // MARK: - Connecting and login

    private mutating func start() {
        guard case .idle = stage else { return }
        stage = .connecting
        connectStart = now
        host.sessionStageChanged(from: .idle, to: .connecting)
        host.recorder.increment(.sessionsStarted)
        armTimeout(after: script.loginTimeout, .login)
        pending.append(.connect)
    }

    private mutating func connected() {
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
            resource: resource, tls: script.login.tls, mechanism: script.login.mechanism,
            register: register)
        configuration.deriveKeysElsewhere = true
        configuration.resume = resumeRequest
        configuration.maxSCRAMIterations = settings.maxSCRAMIterations
        return configuration
    }

    private mutating func keyDerived(_ result: Result<SCRAMKeys, SASLError>) {
        guard case .loggingIn(let progress) = stage else { return }
        perform(progress.machine.keyDerived(result))
    }

    private mutating func tlsEstablished() {
        guard case .loggingIn(let progress) = stage else { return }
        perform(progress.machine.tlsEstablished())
    }

    private mutating func received(_ element: XMLElement) {
        host.recorder.increment(StanzaKind.of(element).inboundCounter)
        switch stage {
        case .loggingIn(let progress):
            if probesServer, element.name == "features", element.namespace == XMPPNamespace.streams {
                for case .element(let feature) in element.children {
                    let offered = ServerFacts.StreamFeature(name: feature.name, namespace: feature.namespace)
                    if !offeredFeatures.contains(offered) { offeredFeatures.append(offered) }
                }
            }
            perform(progress.machine.received(element))
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                end(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)))
                return
            }
            if streamManagementReceived(element) { return }
            streamManagementReceivedStanza(element)
            handleStanza(element)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    private mutating func serverClosedStream() {
        switch stage {
        case .loggingIn(let progress):
            perform(progress.machine.streamClosed())
        case .loggingOut(let since):
            logoutFinished(since: since)
        case .running:
            end(.streamClosedByServer)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    /// Backpressure: while the socket does not drain, the program pauses before its next step (a step
    /// due meanwhile starts late, and its corrected latency shows it); answers to the server still go
    /// out, bounded by the engine's write-stall limits.
    private mutating func writabilityChanged(_ writable: Bool) {
        writeBlocked = !writable
        if writable, case .running = stage, waiting == .nothing, !isRunningProgram { runProgram() }
    }

    private mutating func connectionLost(_ failure: ConnectionFailure?) {
        switch stage {
        case .loggingOut(let since) where failure == nil:
            logoutFinished(since: since)
        case .idle, .awaitingReconnect, .ended:
            break
        default:
            end(.connection(failure ?? .closed))
        }
    }

    private mutating func perform(_ actions: [LoginMachine.Action]) {
        for action in actions {
            if case .ended = stage { return }
            switch action {
            case .openStream:
                pending.append(.openStream)
            case .restartStream:
                pending.append(.restartStream)
            case .send(let element):
                send(element)
            case .startTLS:
                guard settings.tlsAvailable else { return end(.tlsUnavailable) }
                pending.append(.startTLS)
            case .enterPhase(let next):
                if case .loggingIn(let progress) = stage { progress.enter(next, now: now) }
            case .unexpected(_, let reply):
                host.recorder.increment(.unexpectedStanzas)
                if let reply { send(reply) }
            case .registered(let created):
                host.recorder.increment(created ? .accountsCreated : .accountsExisted)
            case .authenticateOnFreshStream:
                // Close this stream and connection; `connected()` starts the authenticating login on the
                // next one (the login timeout keeps running: it covers both streams).
                guard case .loggingIn(let progress) = stage else { return }
                progress.enter(.connect, now: now)
                progress.awaitsFreshConnection = true
                pending.append(.closeStream)
                pending.append(.close)
                pending.append(.connect)
            case .loggedIn(let jid):
                guard case .loggingIn(let progress) = stage else { return }
                if probesServer {
                    host.learned(ServerFacts(streamFeatures: offeredFeatures, saslMechanism: progress.machine.chosenMechanism?.name))
                }
                loggedIn(jid: jid, progress: progress)
            case .resumed(let element):
                resumed(element)
            case .resumeFailed:
                resumeFailed()
            case .fail(let error):
                end(.login(error))
            case .deriveKey(let request):
                // PBKDF2 (up to the iteration cap) runs on a worker thread, never on the event loop.
                pending.append(.deriveKey(request))
            }
        }
    }

    private mutating func loggedIn(jid: String, progress: LoginProgress) {
        boundJID = jid
        stage = .running
        recordPhases(progress, node: identity.node)
        recordLatency(settings.metrics.login, from: loginIntended, serviceFrom: connectStart, node: identity.node)
        if isReconnecting {
            recordLatency(settings.metrics.reconnectLogin, from: loginIntended, serviceFrom: connectStart)
            host.recorder.increment(.sessionsReconnected)
        } else {
            host.recorder.increment(.sessionsLoggedIn)
        }
        hasLoggedIn = true
        isReconnecting = false
        reconnectAttempt = 0
        host.sessionStageChanged(from: .connecting, to: .online)
        timeout = nil
        keepAlivePending = nil
        armKeepAlive()
        enableStreamManagement(offered: progress.machine.offersStreamManagement)
        offersClientState = progress.machine.offersClientState
        if probesServer { askServerAboutItself() }
        // The login instruction completed; the next step is due now.
        advance(to: script.firstInstructionAfterLogin, intended: now)
        runProgram()
    }

    // MARK: - Stopping and ending

    /// Finish the current step, then log out (the run's load phase ended).
    private mutating func gracefulStop() {
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
        host.setOnline(identity.slot, false)
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

    /// Ends the session once: records the outcome, frees the account, closes the connection — unless
    /// the error is a drop the reconnect policy covers, which closes the connection and schedules the
    /// next one instead.
    mutating func end(_ error: SessionError?) {
        let previous = stage
        if case .ended = previous { return }
        let failure = error.map { SessionFailure(error: $0, loginPhase: loginFailed($0, in: previous)) }
        if let error, shouldResume(after: error) { return suspendForResumption(after: error) }
        if let error, shouldReconnect(after: error) { return scheduleReconnect(after: error) }
        stage = .ended
        cancelWake()
        timeout = nil
        let gauge: SessionStage
        switch previous {
        case .idle: gauge = .idle
        case .connecting, .loggingIn, .awaitingReconnect: gauge = .connecting
        case .running, .loggingOut: gauge = .online
        case .ended: gauge = .ended
        }
        host.sessionStageChanged(from: gauge, to: .ended)
        if let error {
            host.recorder.recordErrorExample(kind: error.kind, text: error.detail)
            host.recorder.recordError(kind: error.kind, node: identity.node)
            host.recorder.increment(.sessionsFailed)
        } else {
            host.recorder.increment(.sessionsCompleted)
        }
        host.setOnline(identity.slot, false)
        host.releaseAccount(identity.slot)
        // Also while still connecting (a login timeout during a hung connect, or the run's deadline):
        // closing frees the socket now instead of at the connect timeout.
        pending.append(.close)
        pending.append(.ended(failure: failure))
    }

    /// The connection layer is connecting this session to `node` (its first choice, or the next
    /// endpoint of its RFC 2782 order after a refused connect): logins, errors and stamps are
    /// attributed to it from now on.
    public mutating func connectingTo(node: ServerNode?) {
        identity.node = node
    }

    // MARK: - Reconnecting

    private func shouldReconnect(after error: SessionError) -> Bool {
        guard script.reconnect.isEnabled, hasLoggedIn, !stopRequested, !host.isStopping,
            reconnectAttempt < script.reconnect.attempts, error.isConnectionDrop
        else { return false }
        switch stage {
        case .connecting, .loggingIn, .running: return true
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// Deliberate churn: a running session closes its connection and comes back as after a drop
    /// (first back-off of its policy, or of the default one), counted as churned, not as an error.
    private mutating func churn() {
        guard case .running = stage, !stopRequested, !host.isStopping else { return }
        host.recorder.increment(.sessionsChurned)
        reconnectAttempt = 0
        scheduleReconnect(after: nil)
    }

    /// Counts the drop (when it was one), closes the connection, forgets the connection's state (login,
    /// MUC room, the step in flight) and arms the back-off; the program starts again after the next login.
    private mutating func scheduleReconnect(after error: SessionError?) {
        forgetProgramState()
        if let session = streamManagement {
            // Resumption was not possible (or is over): what the server never acknowledged is given up.
            host.recorder.increment(.streamManagementUnacknowledged, by: UInt64(session.state.unacknowledged.count))
            streamManagement = nil
        }
        reconnectAttempt += 1
        leaveConnection(after: error, attempt: reconnectAttempt)
    }

    /// Leaves the current connection after a drop (`error`) or a churn (nil), for a reconnect or a
    /// resumption: counts the drop, takes the session off the targets, forgets the connection's
    /// timers and backpressure, closes, and arms the back-off of the `attempt`-th try in a row; the
    /// wake-up then calls `reconnect()`.
    mutating func leaveConnection(after error: SessionError?, attempt: Int) {
        if case .running = stage { host.sessionStageChanged(from: .online, to: .connecting) }
        if let error {
            host.recorder.recordErrorExample(kind: error.kind, text: error.detail)
            host.recorder.recordError(kind: error.kind, node: identity.node)
        }
        host.setOnline(identity.slot, false)
        cancelWake()
        timeout = nil
        writeBlocked = false
        keepAlivePending = nil
        stage = .awaitingReconnect(churned: error == nil)
        pending.append(.close)
        armWake(at: now + script.reconnect.delay(attempt: attempt, using: &rng), .reconnect)
    }

    /// Forgets what belonged to the lost stream: the bound JID, the room, the step in flight; the
    /// program starts again after the next login.
    mutating func forgetProgramState() {
        boundJID = nil
        isAvailable = false
        room = nil
        waiting = .nothing
        loops = []
    }

    private mutating func reconnect() {
        guard case .awaitingReconnect = stage else { return }
        host.recorder.increment(.sessionsReconnects)
        stage = .connecting
        isReconnecting = true
        loginIntended = now
        connectStart = now
        armTimeout(after: script.loginTimeout, .login)
        pending.append(.connect)
    }

    // MARK: - Timers

    mutating func armTimeout(after amount: Duration, _ purpose: TimeoutPurpose) {
        timeout = purpose
        pending.append(.armTimeout(at: now + amount))
    }

    private mutating func timeoutFired() {
        guard let purpose = timeout else { return }
        timeout = nil
        switch purpose {
        case .login:
            switch stage {
            case .loggingIn(let progress): end(.loginTimeout(phase: progress.currentPhase))
            default: end(.loginTimeout(phase: .connect))
            }
        case .step(let name):
            if waiting == .ownPresence {
                // No echo within the bounded wait: the presence was sent and the session is available;
                // the step completes unmeasured and the run counts the silent server.
                host.recorder.increment(.presenceEchoMissing)
                presenceEchoOverdue = true
                host.setOnline(identity.slot, true)
                return completeStep(measured: false)
            }
            stepFailed(.stepTimeout(step: name))
        case .logout:
            // The server neither answered our `</stream:stream>` nor closed the connection within the
            // wait: the session did all it was asked and completes; there is no round trip to time.
            host.recorder.increment(.logoutsUnanswered)
            end(nil)
        }
    }

    mutating func armWake(at instant: SessionInstant, _ purpose: WakePurpose) {
        wake = purpose
        pending.append(.armWake(at: instant))
    }

    mutating func cancelWake() {
        guard wake != nil else { return }
        wake = nil
        pending.append(.cancelWake)
    }

    private mutating func wakeFired() {
        guard let purpose = wake else { return }
        wake = nil
        switch purpose {
        case .think(let due):
            guard case .running = stage, waiting == .timer else { return }
            waiting = .nothing
            advance(to: pc + 1, intended: due)
            runProgram()
        case .reconnect:
            reconnect()
        case .mucJoinRetry:
            guard case .running = stage, let room else { return }
            send(Stanza.presence(to: "\(room.jid)/\(room.nick)", extra: [XMLElement("x", namespace: XMPPNamespace.muc)]))
        }
    }

    // MARK: - Recording and writing

    /// Ends the login's current phase now and records every phase it went through, once it succeeded.
    func recordPhases(_ progress: LoginProgress, node: ServerNode? = nil) {
        progress.enter(nil, now: now)
        for (index, nanos) in progress.phaseNanos.enumerated() where progress.phasesVisited & (1 << index) != 0 {
            host.recorder.recordLatency(
                settings.metrics.phases[index], correctedNanoseconds: nanos, serviceNanoseconds: nanos, node: node,
                keepServiceForNode: false)
        }
    }

    /// Records `metric` from `intended` (corrected) and `actual` (service) to now; also for `node`
    /// when given (a run with several endpoints).
    mutating func recordLatency(
        _ metric: MetricID, from intended: SessionInstant, serviceFrom actual: SessionInstant, node: ServerNode? = nil
    ) {
        host.recorder.recordLatency(
            metric, correctedNanoseconds: now.nanoseconds(since: intended),
            serviceNanoseconds: now.nanoseconds(since: actual), node: node)
    }

    mutating func send(_ element: XMLElement) {
        host.recorder.increment(StanzaKind.of(element).outboundCounter)
        pending.append(.send(element))
        if streamManagement != nil { streamManagementSent(element) }
    }
}

/// Something that happened to a session, fed to `SessionMachine.handle(_:now:)`.
public enum SessionEvent: Sendable {
    /// Begin: the machine arms the login timeout and asks for a connection.
    case start
    /// The connection is up.
    case connected
    /// The connection could not be made.
    case connectFailed(ConnectionFailure)
    /// The TLS handshake the machine asked for completed.
    case tlsEstablished
    /// The server sent this depth-1 element.
    case received(XMLElement)
    /// The server sent `</stream:stream>`.
    case streamClosed
    /// The server's bytes broke the XML stream rules.
    case streamFailed(XMPPStreamError)
    /// The connection went away: nil when it closed without an error, else the failure.
    case connectionLost(ConnectionFailure?)
    /// The armed timeout came due.
    case timeoutFired
    /// The armed wake-up came due.
    case wakeFired
    /// The run's load phase ended: finish the current step and log out.
    case stop
    /// Close now, counting this error.
    case abort(SessionError)
    /// The connection's socket became writable (true) or stopped draining (false).
    case writability(Bool)
    /// The armed keep-alive tick came due.
    case keepAliveFired
    /// The run drops this session on purpose (`--churn`): close and reconnect.
    case churn
    /// The PBKDF2 the machine asked for (`deriveKey`) finished.
    case keyDerived(Result<SCRAMKeys, SASLError>)
}

/// The MUC room a session is in or joining: its JID, our nick, the occupants the room announced (for
/// the fan-out's expected receipts) and the join retries of a room still locked by its creator.
/// Boxed (one pointer in `SessionMachine`) because most profiles never join a room.
final class RoomMembership {
    let jid: String
    var nick: String
    var occupants: Set<String> = []
    /// Joins retried because the room was still locked (XEP-0045 §10.1), at most 10.
    var joinRetries = 0

    init(jid: String, nick: String) {
        self.jid = jid
        self.nick = nick
    }
}

/// A login in progress: the `LoginMachine` and how long each phase took so far. Exists only while
/// the session logs in (`SessionMachine.Stage.loggingIn`); the phases are recorded once it succeeds.
final class LoginProgress {
    var machine: LoginMachine
    /// When the current phase began.
    private(set) var phaseStart: SessionInstant
    private(set) var currentPhase: LoginPhase?
    /// Nanoseconds per phase, indexed like `LoginPhase.allCases` (a phase entered twice adds up).
    private(set) var phaseNanos = [UInt64](repeating: 0, count: LoginPhase.allCases.count)
    /// Bit i set: the login went through `LoginPhase.allCases[i]` (recorded even if it took 0 ns).
    private(set) var phasesVisited: UInt32 = 0
    /// The account was registered on a stream now closed; the next connection authenticates.
    var awaitsFreshConnection = false

    init(machine: LoginMachine, now: SessionInstant) {
        self.machine = machine
        phaseStart = now
    }

    /// Ends the current phase at `now` and begins `next` (nil: none).
    func enter(_ next: LoginPhase?, now: SessionInstant) {
        if let currentPhase { record(currentPhase, nanos: now.nanoseconds(since: phaseStart)) }
        currentPhase = next
        phaseStart = now
    }

    func record(_ phase: LoginPhase, nanos: UInt64) {
        guard let index = LoginPhase.allCases.firstIndex(of: phase) else { return }
        phaseNanos[index] &+= nanos
        phasesVisited |= 1 << index
    }
}
