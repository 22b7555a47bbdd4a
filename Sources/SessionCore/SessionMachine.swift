// One virtual user's logic without I/O: its parts composed, and each event routed to the part it concerns.
import LoadProfile
import LoadResults
import XMPPCore

/// One virtual user's whole logic, without I/O: connect, log in, run the compiled profile step by
/// step, answer what the server pushes, log out — as a value that takes events and returns actions.
///
/// The machine composes two parts over one shared `SessionContext` and routes events between them:
/// `ConnectionLife` (connect, the login, keep-alives, stream management, reconnects, logout, the end)
/// and `StepRunner` (the profile's steps and the answers they wait for). Each part is built from
/// features that keep their own state and decide in plain values (`LoginProgress`, `ReconnectState`,
/// `KeepAliveFeature`, `StreamManagementSession`, `ServerFactsProbe`; `StepProgram`, `StepRequests`,
/// the `Waiting` table, `RoomMembership`, `MessageStamping`). A part asks for what only the whole
/// session may do — start the program, log out, end — through `SessionContext.request`, which the
/// machine handles once the part returned.
///
/// Every effect comes back as a `SessionAction`: I/O, timers, and also measurements, the online
/// directory and gauges; the engine's `VirtualUser` performs them. The machine owns no socket, no
/// event loop and no clock: every event carries `now`, the run's monotonic `SessionInstant`, and the
/// machine reads no other time, so tests drive it with plain values and no real time passes.
///
/// Invariants: after `.ended` the machine ignores every event; it emits `.ended` exactly once, after
/// recording the outcome and releasing its account; at most one timeout and one wake-up are armed.
public struct SessionMachine {
    var context: SessionContext
    var life: ConnectionLife
    var steps: StepRunner

    /// - Parameters:
    ///   - intendedStart: when the load model planned this arrival (the origin of the corrected login
    ///     latency).
    ///   - generator: the session's own seeded generator (think times, choices, targets).
    public init(
        identity: SessionIdentity, script: SessionScript, settings: SessionSettings,
        host: any SessionHost, generator: SeededGenerator, intendedStart: SessionInstant
    ) {
        context = SessionContext(identity: identity, script: script, settings: settings, host: host, now: intendedStart, rng: generator)
        life = ConnectionLife(intendedStart: intendedStart)
        steps = StepRunner(start: intendedStart)
    }

    /// Who the session is; only `node` changes (`connectingTo(node:)`).
    public var identity: SessionIdentity { context.identity }
    public var script: SessionScript { context.script }
    public var settings: SessionSettings { context.settings }
    /// The full JID the server bound (nil while not logged in).
    public var boundJID: String? { context.boundJID }
    /// True once the session ended.
    public var isEnded: Bool { life.isEnded }
    /// True while logged in and running its steps (not logging out).
    public var isRunning: Bool { life.isRunning }
    /// When the session's clock starts: its arrival's intended start (the origin of its login latency).
    public var sessionStart: SessionInstant { life.intendedStart }
    /// The login phase the session is in now; nil when not logging in.
    public var loginPhase: LoginPhase? { life.loginPhase }
    /// Where a resuming connection goes: the server's `location` ("host" or "host:port"), when given.
    public var resumeLocation: String? { context.streamManagement?.resumeLocation }

    /// This session asks the server about itself once (XEP-0092, disco#info, XEP-0202) and reports
    /// what its login saw (stream features, SASL mechanism) for the run's manifest: one per run.
    public var probesServer: Bool {
        get { life.probe != nil }
        set { life.probe = newValue ? (life.probe ?? ServerFactsProbe()) : nil }
    }

    /// XEP-0202 time queries a probing session asks.
    public static let timeQueries = ServerFactsProbe.timeQueries

    /// True while the session rests for a while: logged in with nothing to do but stay online, or in a
    /// think time that lasts at least `minimum` more. The engine lets go of per-session buffers then.
    public func isResting(atLeast minimum: Duration) -> Bool {
        life.isRunning && steps.isResting(atLeast: minimum, wake: context.wake, now: context.now)
    }

    /// The connection layer is connecting this session to `node` (its first choice, or the next
    /// endpoint of its RFC 2782 order after a refused connect): logins, errors and stamps are
    /// attributed to it from now on.
    public mutating func connectingTo(node: ServerNode?) {
        context.identity.node = node
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
        if life.isEnded { return }
        context.now = now
        swap(&context.pending, &actions)
        defer { swap(&context.pending, &actions) }
        route(event)
        while let request = context.request {
            context.request = nil
            perform(request)
        }
    }

    private mutating func route(_ event: SessionEvent) {
        switch event {
        case .start: life.start(&context)
        case .connected:
            if case .connecting = life.stage { context.resource = steps.render(context.script.login.resource, &context) }
            life.connected(&context)
        case .connectFailed(let failure): end(.connection(failure))
        case .tlsEstablished: life.login(&context) { $0.tlsEstablished() }
        case .keyDerived(let result): life.login(&context) { $0.keyDerived(result) }
        case .received(let element): received(element)
        case .streamClosed: life.serverClosedStream(&context)
        case .streamFailed(let error): end(.xml(error))
        case .connectionLost(let failure): life.connectionLost(failure, &context)
        case .timeoutFired: timeoutFired()
        case .wakeFired: wakeFired()
        case .stop: gracefulStop()
        case .abort(let error): end(error)
        case .keepAliveFired: keepAliveFired()
        case .churn: churn()
        case .writability(let writable):
            // Backpressure: while the socket does not drain, the program pauses before its next step;
            // answers to the server still go out, bounded by the engine's write-stall limits.
            context.writeBlocked = !writable
            if writable, life.isRunning { steps.runIfIdle(&context) }
        }
    }

    private mutating func perform(_ request: SessionRequest) {
        switch request {
        case .startProgram: steps.begin(&context)
        case .resumeProgram:
            let think = context.streamManagement?.suspendedThink
            context.streamManagement?.suspendedThink = nil
            steps.resume(suspendedThink: think, &context)
        case .logout: life.logout(&context)
        case .end(let error): end(error)
        }
    }

    private mutating func received(_ element: XMLElement) {
        context.record(.count(StanzaKind.of(element).inboundCounter))
        switch life.stage {
        case .loggingIn:
            life.probe?.noteFeatures(element)
            life.login(&context) { $0.received(element) }
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                return end(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)))
            }
            if element.namespace == XMPPNamespace.streamManagement { return life.streamManagementReceived(element, &context) }
            context.streamManagement?.receivedStanza(element)
            if answered(element) { return }
            steps.received(element, running: life.isRunning, &context)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    private mutating func timeoutFired() {
        guard let purpose = context.timeout else { return }
        context.timeout = nil
        if case .step(let name) = purpose { return steps.timedOut(step: name, &context) }
        life.timedOut(purpose, &context)
    }

    private mutating func wakeFired() {
        guard let purpose = context.wake else { return }
        context.wake = nil
        if case .reconnect = purpose { return life.reconnectNow(&context) }
        if life.isRunning { steps.woke(purpose, &context) }
    }

    // MARK: - Keep-alives and the probe

    private mutating func keepAliveFired() {
        guard life.isRunning, let settings = context.script.keepAlive else { return }
        switch life.keepAlive.tick(
            settings, request: context.requestCounter &+ 1, domain: context.settings.domain, now: context.now, writeBlocked: context.writeBlocked)
        {
        case .connectionDead: return end(.keepAliveTimeout)
        case .ping(let ping):
            context.requestCounter &+= 1
            context.send(ping)
        case .whitespace: context.pending.append(.sendRaw(" "))
        case .skipped: break
        }
        life.armKeepAlive(&context)
    }

    /// True when `stanza` answers our keep-alive ping or the probe's queries (it is then consumed).
    private mutating func answered(_ stanza: XMLElement) -> Bool {
        if let answer = life.keepAlive.answer(stanza) {
            switch answer {
            case .roundTrip(let since): context.recordLatency(context.settings.metrics.keepAlivePing, from: since, serviceFrom: since)
            case .unsupported: context.record(.count(.pingsUnsupported))
            case .answered: break
            }
            return true
        }
        guard life.probe != nil, let answer = ServerFactsProbe.answer(stanza, domain: context.settings.domain, now: context.now) else { return false }
        switch answer {
        case .facts(let facts): context.pending.append(.learned(facts))
        case .clockSample(let sent, let utc, let next):
            context.pending.append(.clockSample(sent: sent, received: context.now, utc: utc))
            if let next { context.send(next) }
        case .consumed: break
        }
        return true
    }

    // MARK: - Stopping and ending

    /// Finish the current step, then log out (the run's load phase ended).
    private mutating func gracefulStop() {
        context.stopRequested = true
        guard life.isRunning else { return life.stopWhileNotRunning(&context) }
        if steps.stopNow(&context) { life.logout(&context) }  // else the step in flight finishes first
    }

    /// Deliberate churn: a running session closes its connection and comes back as after a drop
    /// (first back-off of its policy, or of the default one), counted as churned, not as an error.
    private mutating func churn() {
        guard life.isRunning, !context.isStopping else { return }
        context.record(.count(.sessionsChurned))
        life.reconnect.churned()
        steps.forget()
        context.boundJID = nil
        life.scheduleReconnect(after: nil, &context)
    }

    /// Ends the session once: records the outcome, frees the account, closes the connection — unless
    /// the error is a drop that stream management resumes or the reconnect policy covers, which closes
    /// the connection and arms the back-off instead.
    private mutating func end(_ error: SessionError?) {
        guard !life.isEnded else { return }
        let failure = error.map { SessionFailure(error: $0, loginPhase: life.loginFailed($0, &context)) }
        if let error, life.shouldResume(after: error, context) {
            let think = steps.suspendedThink(wake: context.wake)
            return life.suspendForResumption(after: error, wasAvailable: steps.isAvailable, suspendedThink: think, &context)
        }
        if let error, life.shouldReconnect(after: error, context) {
            steps.forget()
            context.boundJID = nil
            return life.scheduleReconnect(after: error, &context)
        }
        life.finish(error, failure: failure, &context)
    }
}
