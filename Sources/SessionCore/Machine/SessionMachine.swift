// One virtual user's logic without I/O: its features, and each event routed to the feature it concerns.
import LoadProfile
import LoadResults
import XMPPCore

/// One virtual user's whole logic, without I/O: connect, log in, run the compiled profile step by
/// step, answer what the server pushes, log out — as a value that takes events and returns actions.
///
/// The machine is a router over a fixed set of features, each owning its state, its timers and its
/// decisions: `ConnectionFeature` (stage, endpoint and fallbacks, backpressure, logout),
/// `LoginFeature` (the login machine, its phases and timeout), `ReconnectFeature` (back-off),
/// `KeepAliveFeature`, `StreamManagementFeature` (acks, resumption), `ServerFactsProbe` (one session
/// per run), `ProgramFeature` (the profile's steps, think times, the `wait` step), and the step
/// features `PresenceFeature`, `RosterFeature`, `QueryFeature`, `MessagingFeature`, `MUCFeature`,
/// and the registered request features (`SessionFeatures`: carbons, CSI, MAM, PEP, …) of a profile
/// that uses them. What they all read is `SessionShared` (identity, script, settings, host, now) and
/// where they all write is the event's actions; no feature calls another — the machine passes what
/// one decided to the next.
///
/// Timers: each feature keeps its own deadlines; after every event the machine arms the session's
/// one coarse timer at the earliest coarse deadline (login, step, logout, write stall, keep-alive)
/// and its one precise wake-up at the earliest precise one (think, MUC retry, reconnect back-off),
/// and when one fires it asks each feature whose deadline came.
///
/// Every effect comes back as a `SessionAction`: I/O, timers, and also measurements, the online
/// directory and gauges; the engine's `VirtualUser` performs them. The machine owns no socket, no
/// event loop and no clock: every event carries `now`, the run's monotonic `SessionInstant`, and the
/// machine reads no other time, so tests drive it with plain values and no real time passes.
///
/// Invariants: after `.ended` the machine ignores every event; it emits `.ended` exactly once, after
/// recording the outcome and releasing its account, and no timer action after it.
public struct SessionMachine {
    var shared: SessionShared
    var connection: ConnectionFeature
    var login: LoginFeature
    var reconnect = ReconnectFeature()
    var keepAlive = KeepAliveFeature()
    var streamManagement: StreamManagementFeature?
    /// The server probe of the run's one probing session (nil for every other session).
    var probe: ServerFactsProbe?
    var program: ProgramFeature
    var presence = PresenceFeature()
    var roster = RosterFeature()
    var query = QueryFeature()
    var messaging = MessagingFeature()
    var muc = MUCFeature()
    /// The request features of a profile that has feature steps (nil otherwise).
    var requests: RequestFeatureSet?
    /// When the session's clock starts: its arrival's intended start.
    public let sessionStart: SessionInstant

    /// - Parameters:
    ///   - intendedStart: when the load model planned this arrival (the origin of the corrected login
    ///     latency).
    ///   - generator: the session's own seeded generator (think times, choices, targets).
    public init(
        identity: SessionIdentity, script: SessionScript, settings: SessionSettings,
        host: any SessionHost, generator: SeededGenerator, intendedStart: SessionInstant
    ) {
        shared = SessionShared(identity: identity, script: script, settings: settings, host: host, now: intendedStart)
        connection = ConnectionFeature()
        login = LoginFeature(intendedStart: intendedStart)
        program = ProgramFeature(start: intendedStart, generator: generator)
        sessionStart = intendedStart
    }

    /// Who the session is.
    public var identity: SessionIdentity { shared.identity }
    public var script: SessionScript { shared.script }
    public var settings: SessionSettings { shared.settings }
    /// The node the session's figures go to now (its first choice's, or the endpoint it fell back to).
    public var node: ServerNode? { connection.node(shared) }
    /// The full JID the server bound (nil while not logged in).
    public var boundJID: String? { login.boundJID }
    /// True once the session ended.
    public var isEnded: Bool { connection.isEnded }
    /// True while logged in and running its steps (not logging out).
    public var isRunning: Bool { connection.isRunning }
    /// The login phase the session is in now; nil when not logging in.
    public var loginPhase: LoginPhase? { connection.phase(login: login.phase) }
    /// The `from` of the stream header the login asks for now (`.openStream`, `.restartStream`): the
    /// user's bare JID where SASL2 may be used (servers offer it only to a header that names the
    /// user), nil otherwise (`LoginMachine.streamHeaderFrom`).
    public var streamHeaderFrom: String? { login.progress?.machine.streamHeaderFrom }

    /// This session asks the server about itself once (XEP-0092, disco#info, XEP-0202) and reports
    /// what its login saw (stream features, SASL mechanism) for the run's manifest: one per run.
    public var probesServer: Bool {
        get { probe != nil }
        set { probe = newValue ? (probe ?? ServerFactsProbe()) : nil }
    }

    /// XEP-0202 time queries a probing session asks.
    public static let timeQueries = ServerFactsProbe.timeQueries

    /// True while the session rests for a while: logged in with nothing to do but stay online, or in a
    /// think time that lasts at least `minimum` more. The engine lets go of per-session buffers then.
    public func isResting(atLeast minimum: Duration) -> Bool {
        connection.isRunning && program.isResting(atLeast: minimum, now: shared.now)
    }

    /// True when the session must not start anything new: this session or the whole run is stopping.
    var isStopping: Bool { program.stopRequested || shared.host.isStopping }

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
        if connection.isEnded { return }
        // What the engine has armed: the features' earliest deadlines before this event — unless the
        // event is that timer coming due (then none is armed any more).
        var armed = timers
        if case .timeoutFired = event { armed.coarse = nil }
        if case .wakeFired = event { armed.precise = nil }
        shared.now = now
        swap(&shared.actions, &actions)
        defer { swap(&shared.actions, &actions) }
        route(event)
        if let session = streamManagement, let every = shared.script.streamManagement?.requestEvery {
            session.queue(&shared.actions, from: session.takeQueueStart(), requestEvery: every)
        }
        arm(timers, armed: armed)
    }

    mutating func route(_ event: SessionEvent) {
        switch event {
        case .start: start()
        case .connected: connected()
        case .connectFailed(let failure):
            if !connection.fallBack(after: failure, &shared) { end(.connection(failure)) }
        case .tlsEstablished(let channelBinding):
            loginOutcome(login.handle(probe: probe, &shared) { $0.tlsEstablished(channelBinding: channelBinding) })
        case .keyDerived(let result): loginOutcome(login.handle(probe: probe, &shared) { $0.keyDerived(result) })
        case .received(let element): received(element)
        case .streamClosed: streamClosed()
        case .streamFailed(let error): end(.xml(error))
        case .connectionLost(let failure): connectionLost(failure)
        case .timeoutFired: timeoutFired()
        case .wakeFired: wakeFired()
        case .stop: gracefulStop()
        case .abort(let error): end(error)
        case .churn: churn()
        case .writability(let writable):
            // Backpressure: while the socket does not drain, the program pauses before its next step;
            // answers to the server still go out, bounded by the engine's queue limit and the stall
            // timeout (`ConnectionFeature`).
            connection.writability(writable, shared)
            if writable { runProgram() }
        }
    }

    /// The features' earliest coarse deadline (login, logout, write stall, step, keep-alive) and
    /// earliest precise wake-up (reconnect back-off, think time, MUC retry). Program, MUC and
    /// keep-alive timers count only while the session runs; an ended session has none.
    var timers: (coarse: SessionInstant?, precise: SessionInstant?) {
        guard !connection.isEnded else { return (nil, nil) }
        let running = connection.isRunning
        var coarse = login.deadline(shared)
        Self.earliest(&coarse, connection.deadline)
        var precise = reconnect.wake
        if running {
            Self.earliest(&coarse, program.deadline)
            Self.earliest(&coarse, keepAlive.due)
            Self.earliest(&precise, program.wake)
            Self.earliest(&precise, muc.wake)
        }
        return (coarse, precise)
    }

    /// Arms (or cancels) the engine's coarse timer and precise wake-up where they differ from what
    /// is armed. An ended session arms nothing (the engine drops its timers at `.ended`).
    mutating func arm(
        _ wanted: (coarse: SessionInstant?, precise: SessionInstant?), armed: (coarse: SessionInstant?, precise: SessionInstant?)
    ) {
        guard !connection.isEnded else { return }
        if wanted.coarse != armed.coarse { shared.actions.append(wanted.coarse.map { .armTimeout(at: $0) } ?? .cancelTimeout) }
        if wanted.precise != armed.precise { shared.actions.append(wanted.precise.map { .armWake(at: $0) } ?? .cancelWake) }
    }

    static func earliest(_ current: inout SessionInstant?, _ other: SessionInstant?) {
        guard let other else { return }
        if let known = current, known <= other { return }
        current = other
    }
}
