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
    private var isStopping: Bool { program.stopRequested || shared.host.isStopping }

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

    private mutating func route(_ event: SessionEvent) {
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
    private var timers: (coarse: SessionInstant?, precise: SessionInstant?) {
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
    private mutating func arm(
        _ wanted: (coarse: SessionInstant?, precise: SessionInstant?), armed: (coarse: SessionInstant?, precise: SessionInstant?)
    ) {
        guard !connection.isEnded else { return }
        if wanted.coarse != armed.coarse { shared.actions.append(wanted.coarse.map { .armTimeout(at: $0) } ?? .cancelTimeout) }
        if wanted.precise != armed.precise { shared.actions.append(wanted.precise.map { .armWake(at: $0) } ?? .cancelWake) }
    }

    private static func earliest(_ current: inout SessionInstant?, _ other: SessionInstant?) {
        guard let other else { return }
        if let known = current, known <= other { return }
        current = other
    }

    // MARK: - Connecting and logging in

    private mutating func start() {
        guard connection.stage == .idle else { return }
        login.connecting(intended: sessionStart, &shared)
        connection.connect(resumeLocation: nil, &shared)
    }

    private mutating func connected() {
        // A registration's fresh connection goes on with the login in progress; any other `connected`
        // while logging in is not ours.
        guard connection.stage == .connecting || (connection.isLoggingIn && login.awaitsFreshConnection) else { return }
        if login.progress == nil {
            var tools = program.lend(templateValues)
            login.setResource(tools.render(shared.script.login.resource, shared))
            program.takeBack(tools)
        }
        _ = connection.connected()
        loginOutcome(login.connected(resume: streamManagement?.resumeRequest, probe: probe, &shared))
    }

    private mutating func loginOutcome(_ outcome: LoginFeature.Outcome?) {
        guard let outcome else { return }
        switch outcome {
        case .loggedIn(let result): loggedIn(result)
        case .resumed(let element): resumed(element)
        case .resumeFailed: resumeFailed()
        case .freshConnection:
            shared.actions.append(.closeStream)
            shared.actions.append(.close)
            connection.connect(resumeLocation: nil, &shared)
        case .failed(let error): end(error)
        }
    }

    private mutating func loggedIn(_ result: LoginResult) {
        login.finished(reconnected: reconnect.isReconnecting, node: connection.node(shared), &shared)
        shared.count(reconnect.isReconnecting ? .sessionsReconnected : .sessionsLoggedIn)
        reconnect.loggedIn()
        connection.loggedIn(&shared)
        keepAlive.forget()
        keepAlive.arm(shared.script.keepAlive, now: shared.now)
        streamManagement = StreamManagementFeature.enable(offered: result.offersStreamManagement, inline: result.inlineStreamManagement, &shared)
        streamManagement?.queueFrom(shared.actions.count)
        // A fresh login: nothing of a lost stream's features holds; then each learns this login's offers.
        for made in requests?.made ?? [] { made.feature.forget() }
        if shared.script.usesRequestFeatures {
            let features = requests ?? RequestFeatureSet()
            requests = features
            for index in shared.script.featureCounters.indices where shared.script.usesFeature(index) {
                features.instance(index).loggedIn(result)
            }
        }
        if let probe { for query in probe.queries(domain: shared.settings.domain, now: shared.now) { shared.send(query) } }
        // Nothing of a lost stream's program holds; run from the first step.
        program.begin(shared)
        presence.forget()
        roster.forget()
        query.forget()
        muc.forget()
        runProgram()
    }

    /// The server resumed our stream: resend what it did not handle; every feature goes on where the
    /// drop left it.
    private mutating func resumed(_ element: XMLElement) {
        guard let session = streamManagement, let resend = session.resumed(element) else {
            return end(.login(.protocolViolation("<resumed/> without a valid 'h'")))
        }
        login.finished(reconnected: reconnect.isReconnecting, node: connection.node(shared), &shared)
        shared.count(.sessionsResumed)
        reconnect.loggedIn()
        connection.loggedIn(&shared)
        presence.resumed(&shared)
        keepAlive.arm(shared.script.keepAlive, now: shared.now)
        for stanza in resend { shared.send(stanza) }
        if program.resumed(shared) { runProgram() }
    }

    /// The server refused to resume: what it never acknowledged is counted (lost unless delivered
    /// anyway) and the login goes on with a fresh bind (the program starts again after it).
    private mutating func resumeFailed() {
        if let session = streamManagement { shared.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount) }
        shared.count(.sessionsResumeFailed)
        streamManagement = nil
    }

    // MARK: - What arrives

    private mutating func received(_ element: XMLElement) {
        shared.count(StanzaKind.of(element).inboundCounter)
        switch connection.stage {
        case .loggingIn:
            probe?.noteFeatures(element)
            loginOutcome(login.handle(probe: probe, &shared) { $0.received(element) })
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                return end(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)))
            }
            if element.namespace == XMPPNamespace.streamManagement { return streamManagementReceived(element) }
            streamManagement?.receivedStanza(element)
            if answeredKeepAliveOrProbe(element) { return }
            pushed(element)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    private mutating func streamManagementReceived(_ element: XMLElement) {
        guard let session = streamManagement else { return shared.count(.unexpectedStanzas) }
        switch session.received(element, &shared) {
        case .handled: break
        case .off(let kind):
            shared.record(.error(kind: kind))
            streamManagement = nil
        case .unexpected: shared.count(.unexpectedStanzas)
        }
    }

    /// True when `stanza` answers our keep-alive ping or the probe's queries (it is then consumed).
    private mutating func answeredKeepAliveOrProbe(_ stanza: XMLElement) -> Bool {
        if let answer = keepAlive.answer(stanza) {
            switch answer {
            case .roundTrip(let since): shared.recordLatency(shared.settings.metrics.keepAlivePing, from: since, serviceFrom: since)
            case .unsupported: shared.count(.pingsUnsupported)
            case .answered: break
            }
            return true
        }
        guard probe != nil, let answer = ServerFactsProbe.answer(stanza, domain: shared.settings.domain, now: shared.now) else {
            return false
        }
        switch answer {
        case .facts(let facts): shared.actions.append(.learned(facts))
        case .clockSample(let sent, let utc, let next):
            shared.actions.append(.clockSample(sent: sent, received: shared.now, utc: utc))
            if let next { shared.send(next) }
        case .consumed: break
        }
        return true
    }

    /// What the server pushes while the session runs (or logs out): feature pushes, stamped messages,
    /// the room's occupancy, capability queries, auto-answers — and the answer the current step waits
    /// for.
    private mutating func pushed(_ stanza: XMLElement) {
        // The profile's request features see a push first (a MAM page, a PEP notification, a
        // blocking-list change); what one consumes goes no further.
        if let requests, requestPush(stanza, requests) { return }
        if stanza.name == "message" { messaging.received(stanza, node: connection.node(shared), &shared) }
        muc.observe(stanza)
        if let answer = presence.capsAnswer(to: stanza, shared) { return shared.send(answer) }  // what our caps mean
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            shared.send(reply)
            switch reaction {
            case .answerPing: shared.count(.pingsAnswered)
            case .acceptSubscription: shared.count(.subscriptionsAccepted)
            default: break
            }
            return
        }
        guard connection.isRunning else { return }
        presence.noteLateEcho(stanza, boundJID: login.boundJID, &shared)
        guard let owner = program.waitingOn else { return }
        let outcome: StepOutcome?
        switch owner {
        case .presence: outcome = presence.answer(stanza, boundJID: login.boundJID, &shared)
        case .roster: outcome = roster.answer(stanza, &shared)
        case .query: outcome = query.answer(stanza, &shared)
        case .muc: outcome = muc.answer(stanza, &shared)
        case .wait:
            var tools = program.lend(templateValues)
            let matches = program.matchesWait(stanza, tools: &tools, shared)
            program.takeBack(tools)
            outcome = matches ? .completed(measured: true) : nil
        case .feature(let index): outcome = requestAnswer(stanza, index: Int(index))
        }
        guard let outcome else { return }
        take(outcome, owner: owner)
        runProgram()
    }

    private mutating func requestPush(_ stanza: XMLElement, _ set: RequestFeatureSet) -> Bool {
        set.first { index, feature in
            var context = RequestContext(tools: program.lend(templateValues), counters: shared.script.featureCounters[index], timeout: .zero)
            let consumed = feature.push(stanza, &shared, &context)
            program.takeBack(context.tools)
            return consumed
        }
    }

    private mutating func requestAnswer(_ stanza: XMLElement, index: Int) -> StepOutcome? {
        guard let requests else { return nil }
        var context = RequestContext(tools: program.lend(templateValues), counters: shared.script.featureCounters[index], timeout: .zero)
        let outcome = requests.instance(index).answer(stanza, &shared, &context)
        program.takeBack(context.tools)
        return outcome
    }

    // MARK: - The program

    /// The values other features keep for templates (`${resource}`, `${seq}`, `${room}`, `${nick}`).
    private var templateValues: TemplateValues {
        TemplateValues(resource: login.resource, sequence: messaging.sequence, room: muc.room?.jid, nick: muc.room?.nick)
    }

    /// Runs steps until one has to wait, the socket stops draining, or the session logs out.
    private mutating func runProgram() {
        while connection.isRunning, program.current == .idle {
            if connection.writeBlocked && !program.stopRequested { return }  // goes on when the socket drains
            switch program.next(shared) {
            case .logout:
                connection.logout(&shared)
                return
            case .step(let action, let instruction):
                startStep(action, instruction)
            }
        }
    }

    /// Hands a step to the feature that owns it and gives the program the outcome.
    private mutating func startStep(_ action: StepAction, _ instruction: SessionScript.Instruction) {
        var tools = program.lend(templateValues)
        let timeout = instruction.timeout
        let owner: ProgramFeature.Owner
        let outcome: StepOutcome
        switch action {
        case .presence(let presenceAction):
            owner = .presence
            outcome = presence.start(presenceAction, timeout: timeout, tools: &tools, &shared)
        case .roster(let rosterAction):
            owner = .roster
            outcome = roster.start(rosterAction, timeout: timeout, tools: &tools, &shared)
        case .iq(let iq):
            owner = .query
            outcome = query.start(iq, timeout: timeout, tools: &tools, &shared)
        case .message(let message):
            owner = .query
            outcome = messaging.start(
                message, intended: program.stepIntended, boundJID: login.boundJID, node: connection.node(shared), tools: &tools, &shared)
        case .muc(let mucAction):
            owner = .muc
            switch muc.start(mucAction, timeout: timeout, tools: &tools, &shared) {
            case .outcome(let started):
                outcome = started
            case .groupchat(let room, let occupants, let body):
                let text = MessagingFeature.text(of: body, tools: &tools, shared)
                messaging.send(
                    to: room, type: "groupchat", body: text, intended: program.stepIntended, node: connection.node(shared), occupants: occupants,
                    &shared)
                outcome = .completed(measured: false)
            }
        case .feature(let step):
            guard let index = SessionFeatures.index(named: step.feature) else {
                owner = .query
                outcome = .failed(.featureUnknown(step.feature))
                break
            }
            owner = .feature(UInt16(index))
            let features = requests ?? RequestFeatureSet()
            requests = features
            var context = RequestContext(tools: tools, counters: shared.script.featureCounters[index], timeout: timeout)
            outcome = features.instance(index).start(step, &shared, &context)
            tools = context.tools
        case .wait(let condition):
            program.takeBack(tools)
            return program.wait(condition, shared)
        case .think(let time):
            program.takeBack(tools)
            return program.think(time)
        case .stayOnline:
            program.takeBack(tools)
            return program.stayOnline(stopping: shared.host.isStopping)
        case .login, .logout, .loop, .choose:
            preconditionFailure("login, logout and control flow are handled by StepProgram")
        }
        program.takeBack(tools)
        take(outcome, owner: owner)
    }

    /// The program takes a step's outcome; a failure the step does not survive ends the session.
    private mutating func take(_ outcome: StepOutcome, owner: ProgramFeature.Owner) {
        if let error = program.take(outcome, owner: owner, &shared) { end(error) }
    }

    // MARK: - Timers

    private mutating func timeoutFired() {
        if let due = login.deadline(shared), due <= shared.now { return end(login.timedOut()) }
        if connection.logoutUnanswered(&shared) { return end(nil) }
        if connection.stalled(shared) { return end(.writeStalled) }
        guard connection.isRunning else { return }
        if let owner = program.timedOut(shared) { stepTimedOut(owner) }
        if connection.isRunning, let due = keepAlive.due, due <= shared.now { keepAliveTick() }
    }

    /// The current step's timeout came: its owner says what that means.
    private mutating func stepTimedOut(_ owner: ProgramFeature.Owner) {
        let name = program.instruction(shared).name
        let outcome: StepOutcome
        switch owner {
        case .presence: outcome = presence.timedOut(&shared)
        case .muc: outcome = muc.timedOut(step: name)
        case .roster:
            roster.forget()
            outcome = .failed(.stepTimeout(step: name))
        case .query:
            query.forget()
            outcome = .failed(.stepTimeout(step: name))
        case .wait, .feature:
            outcome = .failed(.stepTimeout(step: name))
        }
        take(outcome, owner: owner)
        runProgram()
    }

    private mutating func keepAliveTick() {
        guard let settings = shared.script.keepAlive else { return }
        switch keepAlive.tick(settings, domain: shared.settings.domain, now: shared.now, writeBlocked: connection.writeBlocked) {
        case .connectionDead: return end(.keepAliveTimeout)
        case .ping(let ping): shared.send(ping)
        case .whitespace: shared.actions.append(.sendRaw(" "))
        case .skipped: break
        }
        keepAlive.arm(settings, now: shared.now)
    }

    private mutating func wakeFired() {
        if reconnect.due(shared) { return reconnectNow() }
        guard connection.isRunning else { return }
        muc.retryDue(&shared)
        if program.thinkEnded(shared) { runProgram() }
    }

    // MARK: - Closing

    private mutating func streamClosed() {
        switch connection.stage {
        case .loggingIn: loginOutcome(login.handle(probe: probe, &shared) { $0.streamClosed() })
        case .loggingOut: if connection.logoutFinished(&shared) { end(nil) }
        case .running: end(.streamClosedByServer)
        case .idle, .connecting, .awaitingReconnect, .ended: break
        }
    }

    private mutating func connectionLost(_ failure: ConnectionFailure?) {
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
    private mutating func gracefulStop() {
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
    private mutating func churn() {
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
    private mutating func forgetStream() {
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
    private mutating func scheduleReconnect(after error: SessionError?) {
        if let session = streamManagement {
            shared.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount)
            streamManagement = nil
        }
        leaveConnection(after: error, attempt: reconnect.nextAttempt())
    }

    /// Leaves the connection after a drop (`error`) or a churn (nil) and arms the back-off of the
    /// `attempt`-th try in a row.
    private mutating func leaveConnection(after error: SessionError?, attempt: Int) {
        if let error { shared.recordError(error, node: connection.node(shared)) }
        connection.leave(churned: error == nil, &shared)
        keepAlive.forget()
        login.dropConnection()
        reconnect.backOff(attempt: attempt, shared)
    }

    /// The back-off ended: connect and log in again (resuming where the server said, if it did).
    private mutating func reconnectNow() {
        guard case .awaitingReconnect = connection.stage else { return }
        shared.count(.sessionsReconnects)
        login.connecting(intended: shared.now, &shared)
        _ = connection.reconnecting(resumeLocation: streamManagement?.resumeLocation, &shared)
    }

    /// Ends the session once: records the outcome, frees the account, closes the connection — unless
    /// the error is a drop that stream management resumes or the reconnect policy covers, which closes
    /// the connection and arms the back-off instead.
    private mutating func end(_ error: SessionError?) {
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
