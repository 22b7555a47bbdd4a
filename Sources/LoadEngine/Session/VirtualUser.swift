import LoadProfile
import LoadResults
import NIOCore
import SessionCore
import XMPPCore

/// One virtual user: its `SessionMachine` (identity, script position, sequence numbers, login state)
/// and, while it has one, its connection. The user outlives its connections: a connection is
/// something it has, can lose and can replace; the machine decides, the user performs.
///
/// Performing means: writes through the connection's codec, STARTTLS, closing, the session's one
/// coarse timeout (on the loop's `SessionTimeouts` heap, cancelled lazily by generation) and its one
/// precise wake-up (a NIO scheduled callback, for think times and paced sends). Time comes from the event loop's `now`
/// as a `SessionInstant`, so an `EmbeddedEventLoop`'s virtual clock drives everything in tests.
///
/// Loop-bound: lives on its `LoopContext`'s event loop; registered there by serial while alive.
final class VirtualUser {
    // Stored properties are laid out in declaration order: the small ones follow `wake` to fill the
    // bytes after its handle, so an idle session's user object stays in its malloc size class
    // (memory per idle session, docs/ARCHITECTURE.md).
    private(set) var machine: SessionMachine
    unowned let loop: LoopContext
    private var connection: SessionChannelHandler?
    /// The timers most sessions never arm (write stall, keep-alive), boxed so an idle session pays one
    /// pointer for them.
    private var occasional: OccasionalTimers?
    /// The last stanzas while the session is busy (nil while it rests: memory per idle session); offered
    /// to the loop's failure forensics when a failure ends the session.
    private var transcript: SessionTranscript?
    /// The closed-model user (or open-model arrival) this session serves.
    let userIndex: Int
    /// The precise wake-up, with this user as its handler.
    private var wake = LoopCallback()
    private var timeoutGeneration: UInt32 = 0
    /// The try of the current connection attempt: 0 is `endpoint`, k the k-th fallback of the
    /// session's RFC 2782 order (`RunEnvironment.endpointFallback`). Reset by every `.connect`.
    private var endpointAttempt: UInt16 = 0
    private var hasEnded = false
    private let storedPhase: Int32
    private let storedEndpoint: Int32

    /// The session's load phase.
    var phase: Int { Int(storedPhase) }
    /// The server endpoint this user connects to (an index into `RunEnvironment.resolvedEndpoints`).
    var endpoint: Int { Int(storedEndpoint) }

    /// Armed while the connection's socket does not drain; ends the session with `write-stalled`.
    private var stallTask: Scheduled<Void>? {
        get { occasional?.stall }
        set { if newValue != nil || occasional != nil { timers().stall = newValue } }
    }
    private var keepAliveTask: Scheduled<Void>? {
        get { occasional?.keepAlive }
        set { if newValue != nil || occasional != nil { timers().keepAlive = newValue } }
    }

    private func timers() -> OccasionalTimers {
        if let occasional { return occasional }
        let made = OccasionalTimers()
        occasional = made
        return made
    }

    init(machine: SessionMachine, loop: LoopContext, userIndex: Int, phase: Int, endpoint: Int = 0) {
        self.machine = machine
        self.loop = loop
        self.userIndex = userIndex
        storedPhase = Int32(phase)  // phases and endpoints are counted in the dozens
        storedEndpoint = Int32(endpoint)
    }

    var serial: Int { machine.identity.serial }

    /// The endpoint (an index into `RunEnvironment.resolvedEndpoints`) the current connect goes to:
    /// `endpoint`, or after connect failures the next one of the session's RFC 2782 order.
    var connectTarget: Int {
        guard endpointAttempt > 0, let order = loop.environment.endpointFallback else { return endpoint }
        return order.endpoint(attempt: Int(endpointAttempt), first: endpoint, arrival: userIndex) ?? endpoint
    }

    /// Whether the current connect is the session's first choice (a resumption location applies).
    var isFirstTry: Bool { endpointAttempt == 0 }

    var script: SessionScript { machine.script }

    // MARK: - Events

    /// Feeds one event to the machine at the loop's current time and performs what it returns.
    func handle(_ event: SessionEvent) {
        let now = loop.now()
        note(event, at: now)
        var actions = loop.actionBuffers.take()
        machine.handle(event, now: now, into: &actions)
        perform(actions)
        loop.actionBuffers.give(back: &actions)
        if transcript != nil, machine.isResting(atLeast: SessionTranscript.restAfter) { transcript = nil }
    }

    // MARK: - Transcript (failure forensics)

    private func record(_ direction: ForensicStanza.Direction, _ content: SessionTranscript.Content, at instant: SessionInstant? = nil) {
        guard !hasEnded else { return }
        let ring: SessionTranscript
        if let transcript {
            ring = transcript
        } else {
            ring = SessionTranscript()
            transcript = ring
        }
        ring.append(direction, content, at: instant ?? loop.now())
    }

    /// Keeps what `event` brought in: a stanza from the server, or a connection event.
    private func note(_ event: SessionEvent, at now: SessionInstant) {
        switch event {
        case .received(let element): record(.received, .element(element), at: now)
        case .streamClosed: record(.received, .streamClose, at: now)
        case .connected: record(.event, .event("connected"), at: now)
        case .connectFailed(let failure): record(.event, .event("connect failed: \(failure.kind)"), at: now)
        case .tlsEstablished: record(.event, .event("TLS established"), at: now)
        case .streamFailed(let error): record(.event, .event("stream failed: \(error.kind)"), at: now)
        case .connectionLost(let failure): record(.event, .event(failure.map { "connection lost: \($0.kind)" } ?? "connection closed"), at: now)
        case .timeoutFired: record(.event, .event("timeout fired"), at: now)
        case .abort(let error): record(.event, .event("aborted: \(error.kind)"), at: now)
        case .start, .wakeFired, .stop, .writability, .keepAliveFired, .churn, .keyDerived: break
        }
    }

    /// Whether the user holds a transcript now (nil while it rests).
    var holdsTranscript: Bool { transcript != nil }

    /// The server's stream header arrived on `handler`.
    func connection(_ handler: SessionChannelHandler, opened header: StreamHeader) {
        guard handler === connection else { return }
        record(.received, .serverStreamOpen(header))
    }

    /// A failure ended the session: its transcript goes to the loop's forensics when the loop still
    /// wants sessions of its kind (text is made and redacted only then).
    private func offerForensics(_ failure: SessionFailure) {
        let kind = failure.error.kind
        guard loop.recorder.wantsForensics(kind: kind) else { return }
        loop.recorder.recordForensics(
            FailedSession(
                kind: kind, session: serial, account: machine.identity.username, node: machine.identity.node?.label,
                phase: failure.loginPhase?.rawValue, detail: failure.error.detail,
                failedAtSeconds: Double(loop.now().nanoseconds) / 1e9,
                stanzas: transcript?.stanzas(since: machine.sessionStart) ?? []))
    }

    /// Starts the session: the machine arms its login timeout and asks for a connection.
    func start() { handle(.start) }

    /// Finish the current step, then log out.
    func gracefulStop() { handle(.stop) }

    /// Close now, counting `error`.
    func abort(_ error: SessionError) { handle(.abort(error)) }

    /// The loop's timeout heap says the timeout armed as `generation` came due.
    func timeoutExpired(generation: UInt32) {
        guard generation == timeoutGeneration else { return }
        handle(.timeoutFired)
    }

    // MARK: - Connection callbacks (from SessionChannelHandler)

    func attach(_ handler: SessionChannelHandler) {
        connection = handler
    }

    func connectionActive(_ handler: SessionChannelHandler) {
        guard handler === connection else { return }
        handle(.connected)
    }

    /// An event from `handler`; ignored when it is not (or no longer) the user's connection.
    func connection(_ handler: SessionChannelHandler, sent event: SessionEvent) {
        guard handler === connection else { return }
        if case .connectionLost = event { connection = nil }
        handle(event)
    }

    /// The connection's socket stopped draining (or drains again): the machine pauses its program, and
    /// a stall longer than `--write-stall` ends the session.
    func connection(_ handler: SessionChannelHandler, writable: Bool) {
        guard handler === connection else { return }
        stallTask?.cancel()
        stallTask = nil
        if !writable {
            let bound = NIOLoopBound(self, eventLoop: loop.eventLoop)
            stallTask = loop.eventLoop.scheduleTask(in: TimeAmount(loop.environment.configuration.writeStallTimeout)) {
                let user = bound.value
                user.stallTask = nil
                user.handle(.abort(.writeStalled))
            }
        }
        handle(.writability(writable))
    }

    /// The connect attempt failed before any channel became active.
    ///
    /// With several TCP endpoints a connect-level failure (refused, timed out, unreachable) goes on to
    /// the next endpoint of the session's RFC 2782 order within the same login attempt, counted in
    /// `endpoint_fallbacks`; the machine hears of the failure (and counts its error) only when every
    /// endpoint failed. Its login timeout and latency keep running from the intended start.
    func connectFailed(_ failure: ConnectionFailure) {
        connection = nil
        let environment = loop.environment
        if !hasEnded, endpointAttempt < UInt16.max,
            environment.fallbackEndpoint(after: failure, attempt: Int(endpointAttempt), first: endpoint, arrival: userIndex)
                != nil
        {
            endpointAttempt += 1
            loop.recorder.increment(.endpointFallbacks)
            machine.connectingTo(node: environment.node(ofEndpoint: connectTarget))
            return loop.connector.connect(self)
        }
        handle(.connectFailed(failure))
    }

    // MARK: - Performing

    private func perform(_ actions: [SessionAction]) {
        for action in actions {
            if hasEnded { return }
            switch action {
            case .connect:
                if endpointAttempt != 0 {
                    endpointAttempt = 0
                    machine.connectingTo(node: loop.environment.node(ofEndpoint: endpoint))
                }
                loop.connector.connect(self)
            case .openStream:
                record(.sent, .ourStreamOpen(domain: machine.settings.domain))
                connection?.write(.header(domain: machine.settings.domain))
            case .restartStream:
                record(.sent, .ourStreamOpen(domain: machine.settings.domain))
                connection?.restartStream()
                connection?.write(.header(domain: machine.settings.domain))
            case .send(let element):
                record(.sent, .element(element))
                connection?.write(.element(element))
            case .sendMessage(let message):
                record(.sent, .message(message))
                connection?.write(.message(message))
            case .sendRaw(let text):
                record(.sent, .raw(text))
                connection?.write(.raw(text))
            case .closeStream:
                record(.sent, .streamClose)
                connection?.write(.close)
            case .startTLS:
                do { try connection?.startTLS(loop.environment.tls) } catch {
                    return handle(.abort(.tlsUnavailable))
                }
            case .armTimeout(let instant):
                timeoutGeneration &+= 1
                loop.timeouts.arm(
                    SessionTimeouts.Token(serial: serial, generation: timeoutGeneration),
                    at: loop.deadline(instant))
            case .armWake(let instant):
                wake.arm(at: loop.deadline(instant), on: loop.eventLoop, handler: self)
            case .cancelWake:
                wake.cancel()
            case .armKeepAlive(let instant):
                keepAliveTask?.cancel()
                let bound = NIOLoopBound(self, eventLoop: loop.eventLoop)
                keepAliveTask = loop.eventLoop.scheduleTask(deadline: loop.deadline(instant)) {
                    let user = bound.value
                    user.keepAliveTask = nil
                    user.handle(.keepAliveFired)
                }
            case .deriveKey(let request):
                loop.keyDerivations.derive(request, for: self)
            case .close:
                let closing = connection
                connection = nil
                stallTask?.cancel()
                stallTask = nil
                keepAliveTask?.cancel()
                keepAliveTask = nil
                closing?.close()
            case .record(let effect):
                effect.apply(to: &loop.recorder)
            case .setOnline(let online):
                loop.environment.directory.setOnline(machine.identity.slot, online)
            case .stageChanged(let old, let new):
                loop.gauges.moved(from: old, to: new)
            case .releaseAccount:
                loop.environment.directory.release(machine.identity.slot)
            case .learned(let facts):
                loop.learned(facts)
            case .clockSample(let sent, let received, let utc):
                loop.clockSample(sent: sent, received: received, utc: utc)
            case .ended(let failure):
                if let failure { offerForensics(failure) }
                transcript = nil
                hasEnded = true
                timeoutGeneration &+= 1
                wake.cancel()
                keepAliveTask?.cancel()
                keepAliveTask = nil
                loop.sessionEnded(self, failed: failure != nil)
            }
        }
    }
}

// MARK: - The wake-up

extension VirtualUser: NIOScheduledCallbackHandler {
    /// The wake-up is due (`LoopCallback` tells a stale one apart).
    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard wake.fired(now: eventLoop.now) else { return }
        handle(.wakeFired)
    }
}

/// A virtual user's rarely armed timers, allocated on first use.
private final class OccasionalTimers {
    var stall: Scheduled<Void>?
    var keepAlive: Scheduled<Void>?
}
