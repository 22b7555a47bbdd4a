// One virtual user's logic without I/O: the state a session keeps and the routing of its events.
import LoadProfile
import LoadResults
import XMPPCore

/// One virtual user's whole logic, without I/O: connect, log in (driving a `LoginMachine`), run the
/// compiled profile step by step, answer what the server pushes, log out — as a value that takes
/// events and returns actions.
///
/// The machine composes features that each keep their own state and decide in plain values: the
/// login (`LoginProgress`), the step interpreter (`StepProgram`, `StepRequests`, the `Waiting`
/// table), MUC (`RoomMembership`), keep-alives (`KeepAliveFeature`), stream management
/// (`StreamManagementSession`), reconnects and churn (`ReconnectState`), message stamps
/// (`MessageStamping`) and the server probe (`ServerFactsProbe`). The machine routes events to them
/// and turns their answers into `SessionAction`s — I/O, timers and every effect (metrics, the online
/// directory, gauges) — so the engine's `VirtualUser` only performs them. It owns no socket, no
/// event loop and no clock: every event carries `now`, the run's monotonic `SessionInstant`, and the
/// machine reads no other time, so tests drive it with plain values and no real time passes.
///
/// Timing: the login's corrected latency counts from the arrival's *intended* start, its service
/// latency from the connect; each later step counts from the time it was due and from when it
/// actually started (`StepProgram`). Login phases are summed per phase and recorded once the login
/// succeeded.
///
/// The machine outlives its connections: identity, script position, sequence numbers and counters
/// stay when a connection is lost; `end` decides what follows a drop (a resumption, a reconnect after
/// the back-off, or the end of the session).
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
        /// Logging in: the login machine and its phase timing, boxed only while they are needed.
        case loggingIn(LoginProgress)
        case running
        case loggingOut(since: SessionInstant)
        /// Dropped after logging in (or churned: `churned` is true); waiting out the reconnect back-off.
        case awaitingReconnect(churned: Bool)
        case ended
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

    var stage: Stage = .idle
    /// The event being handled happened at this instant (set on entry to `handle`).
    var now: SessionInstant
    /// Actions produced while handling the current event: the caller's buffer while `handle` runs,
    /// empty (no storage) between events.
    var pending: [SessionAction] = []
    var timeout: TimeoutPurpose?
    var wake: WakePurpose?

    // Login and reconnects
    var resource = ""
    public internal(set) var boundJID: String?
    let intendedStart: SessionInstant
    /// When the current login was due: the arrival's intended start, or a reconnect's back-off end.
    var loginIntended: SessionInstant
    var connectStart: SessionInstant
    var reconnect = ReconnectState()

    // Program
    var program: StepProgram
    var waiting: Waiting = .nothing
    /// True while `runProgram` is on the stack: step completions inside it must not re-enter it.
    var isRunningProgram = false
    var stopRequested = false
    /// The connection's socket stopped draining: no new step starts until it drains (backpressure).
    var writeBlocked = false
    var rng: SeededGenerator
    var messageSequence: UInt32 = 0
    var requestCounter: UInt32 = 0
    /// Our available presence was sent (others may pick us as a `to: random` target).
    var isAvailable = false
    /// The presence step completed without its echo; an echo arriving now is counted as late.
    var presenceEchoOverdue = false
    /// The features after authentication offered XEP-0352 client state indication.
    var offersClientState = false

    // Features that keep their own state
    /// The MUC room we are in or joining (nil: none).
    var room: RoomMembership?
    var keepAlive = KeepAliveFeature()
    /// XEP-0198 state, while the profile asks for stream management and the server granted it.
    var streamManagement: StreamManagementSession?
    /// The server probe of the run's one probing session (nil for every other session).
    var probe: ServerFactsProbe?

    /// This session asks the server about itself once (XEP-0092, disco#info, XEP-0202) and reports
    /// what its login saw (stream features, SASL mechanism) for the run's manifest: one per run.
    public var probesServer: Bool {
        get { probe != nil }
        set { probe = newValue ? (probe ?? ServerFactsProbe()) : nil }
    }

    /// XEP-0202 time queries a probing session asks.
    public static let timeQueries = ServerFactsProbe.timeQueries

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
        self.program = StepProgram(start: intendedStart)
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

    /// When the session's clock starts: its arrival's intended start (the origin of its login latency).
    public var sessionStart: SessionInstant { intendedStart }

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

    /// The connection layer is connecting this session to `node` (its first choice, or the next
    /// endpoint of its RFC 2782 order after a refused connect): logins, errors and stamps are
    /// attributed to it from now on.
    public mutating func connectingTo(node: ServerNode?) {
        identity.node = node
    }

    /// Backpressure: while the socket does not drain, the program pauses before its next step (a step
    /// due meanwhile starts late, and its corrected latency shows it); answers to the server still go
    /// out, bounded by the engine's write-stall limits.
    private mutating func writabilityChanged(_ writable: Bool) {
        writeBlocked = !writable
        if writable, case .running = stage, waiting == .nothing, !isRunningProgram { runProgram() }
    }

    // MARK: - Ending

    /// Ends the session once: records the outcome, frees the account, closes the connection — unless
    /// the error is a drop that stream management resumes or the reconnect policy covers, which closes
    /// the connection and arms the back-off instead.
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
        pending.append(.stageChanged(from: gauge, to: .ended))
        if let error {
            recordError(error)
            record(.count(.sessionsFailed))
        } else {
            record(.count(.sessionsCompleted))
        }
        pending.append(.setOnline(false))
        pending.append(.releaseAccount)
        // Also while still connecting (a login timeout during a hung connect, or the run's deadline):
        // closing frees the socket now instead of at the connect timeout.
        pending.append(.close)
        pending.append(.ended(failure: failure))
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
            if case .loggingIn(let progress) = stage { return end(.loginTimeout(phase: progress.currentPhase)) }
            end(.loginTimeout(phase: .connect))
        case .step(let name):
            switch waiting.timedOut(step: name) {
            case .echoMissing:
                record(.count(.presenceEchoMissing))
                presenceEchoOverdue = true
                pending.append(.setOnline(true))
                completeStep(measured: false)
            case .failed(let error):
                stepFailed(error)
            }
        case .logout:
            // The server neither answered our `</stream:stream>` nor closed the connection within the
            // wait: the session did all it was asked and completes; there is no round trip to time.
            record(.count(.logoutsUnanswered))
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
            program.advanceToNext(intended: due)
            runProgram()
        case .reconnect:
            reconnectNow()
        case .mucJoinRetry:
            guard case .running = stage, let room else { return }
            send(room.joinPresence())
        }
    }

    // MARK: - Effects

    mutating func record(_ effect: MetricEffect) { pending.append(.record(effect)) }

    /// Counts `error` (also for the session's node) and keeps its detail as its kind's example.
    mutating func recordError(_ error: SessionError) {
        record(.errorExample(kind: error.kind, text: error.detail))
        record(.error(kind: error.kind, node: identity.node))
    }

    /// Records `metric` from `intended` (corrected) and `actual` (service) to now; also for `node`
    /// when given (a run with several endpoints).
    mutating func recordLatency(
        _ metric: MetricID, from intended: SessionInstant, serviceFrom actual: SessionInstant, node: ServerNode? = nil
    ) {
        record(.latency(metric, corrected: now.nanoseconds(since: intended), service: now.nanoseconds(since: actual), node: node))
    }

    mutating func send(_ element: XMLElement) {
        record(.count(StanzaKind.of(element).outboundCounter))
        pending.append(.send(element))
        if let session = streamManagement, let every = script.streamManagement?.requestEvery,
            let request = session.sent(element, requestEvery: every)
        {
            pending.append(.send(request))
        }
    }
}
