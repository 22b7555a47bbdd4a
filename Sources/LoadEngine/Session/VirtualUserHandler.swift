import LoadProfile
import LoadResults
import NIOCore
import NIOSSL
import NIOTLS
import XMPPCore

/// One virtual user = one connection: frames and parses the server's stream, drives the login state
/// machine, then runs the compiled profile step by step, answering whatever the server pushes.
///
/// Lives on one event loop with its `LoopContext`; records into the loop's recorder without locks.
/// Timing (all monotonic): the login's corrected latency counts from the arrival's *intended* time,
/// its service latency from the TCP connect; each later step counts from the time it was due (the end
/// of the previous step plus think time) and from when it actually started. Per-session memory is kept
/// small: the framer holds only an incomplete element, the login machine is dropped after login.
final class VirtualUserHandler: ChannelInboundHandler, ByteCountSink {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Stage {
        case connecting
        case loggingIn(LoginMachine)
        case running
        case loggingOut(since: NIODeadline)
        case ended
    }

    /// What the current step waits for before it completes.
    enum Waiting {
        case nothing
        case iqResponse(id: String)
        case ownPresence
        case mucJoin(room: String)
        case stanza(WaitCondition)
        case timer
        case stayOnline
    }

    struct LoopFrame {
        let start: Int
        var remaining: Int?
        let until: NIODeadline?
    }

    let identity: SessionIdentity
    unowned let loop: LoopContext
    let script: SessionScript
    private(set) var stage: Stage = .connecting
    /// True while a read is being handled (writes are flushed once at its end).
    private var isReading = false
    private var needsFlush = false
    /// True while `runProgram` is on the stack: step completions inside it must not re-enter it.
    var isRunningProgram = false
    var context: ChannelHandlerContext?
    private var framer = XMLStreamFramer()
    private var header: StreamHeader?
    var resource: String = ""
    private(set) var boundJID: String?

    // Program state
    var pc = 0
    var loops: [LoopFrame] = []
    var waiting: Waiting = .nothing
    var stepTimer: Scheduled<Void>?
    /// What happens when the armed timeout comes due (nil: none armed). See `SessionTimeouts`.
    var timeout: TimeoutAction?
    /// Bumped on every arm and cancel, so a stale entry in the loop's timeout heap is ignored.
    private var timeoutGeneration: UInt32 = 0
    var rng: SeededGenerator
    var messageSequence: UInt32 = 0
    var requestCounter: UInt32 = 0
    var room: (jid: String, nick: String)?
    var mucJoinRetries = 0
    /// Nicks in our room (only while in one).
    var roomOccupants: Set<String> = []
    var stopRequested = false

    /// The closed-model user (or open-model arrival) this session serves, and its load phase.
    var userIndex = 0
    var phase = 0

    // Timing
    let intendedStart: NIODeadline
    var connectStart: NIODeadline
    var phaseStart: NIODeadline
    var currentPhase: LoginPhase?
    var phaseNanos: [UInt64] = Array(repeating: 0, count: LoginPhase.allCases.count)
    var stepIntended: NIODeadline
    var stepStart: NIODeadline

    init(identity: SessionIdentity, loop: LoopContext, script: SessionScript, rng: SeededGenerator,
         intendedStart: NIODeadline, connectStart: NIODeadline) {
        self.identity = identity
        self.loop = loop
        self.script = script
        self.rng = rng
        self.intendedStart = intendedStart
        self.connectStart = connectStart
        self.phaseStart = connectStart
        self.stepIntended = intendedStart
        self.stepStart = connectStart
    }

    // MARK: - ByteCountSink

    func received(_ byteCount: Int) { loop.recorder.increment(.bytesReceived, by: UInt64(byteCount)) }
    func sent(_ byteCount: Int) { loop.recorder.increment(.bytesSent, by: UInt64(byteCount)) }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let now = NIODeadline.now()
        record(phase: .connect, nanos: now - connectStart)
        phaseStart = now
        guard case .connecting = stage else { return }
        let options = loginOptions()
        resource = options.resource.render { self.variable($0) }
        var configuration = LoginMachine.Configuration(
            domain: loop.environment.configuration.domain, username: identity.username,
            password: loop.environment.configuration.password, resource: resource,
            tls: loop.environment.configuration.tls ?? Self.policy(options.tls),
            mechanism: loop.environment.configuration.mechanism ?? options.mechanism.flatMap(SASLMechanism.init(name:)),
            register: options.register)
        if loop.environment.tls == nil && configuration.tls != .none { configuration.tls = .none }
        var machine = LoginMachine(configuration: configuration, keyCache: loop.keyCache)
        let actions = machine.start()
        stage = .loggingIn(machine)
        perform(actions)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { framer.append($0) }
        isReading = true
        drainFramer()
        isReading = false
        if needsFlush {
            needsFlush = false
            context.flush()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            guard case .loggingIn(var machine) = stage else { return }
            let actions = machine.tlsEstablished()
            stage = .loggingIn(machine)
            perform(actions)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch stage {
        case .ended: return
        case .loggingOut(let since):
            recordLatency(loop.environment.metrics.logout, from: since, serviceFrom: since)
            end(error: nil)
        default:
            end(error: "connection-closed")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .ended = stage { return }
        if let error = error as? XMPPStreamError {
            end(error: error.kind)
        } else {
            end(error: ConnectionErrorKind.kind(of: error))
        }
    }

    // MARK: - Inbound stream

    private func drainFramer() {
        while true {
            if case .ended = stage { return }
            let unit: FramedUnit?
            do { unit = try framer.next() } catch {
                end(error: error.kind)
                return
            }
            guard let unit else { return }
            switch unit {
            case .streamOpen(let bytes):
                do { header = try loop.parser.parseHeader(bytes) } catch {
                    end(error: error.kind)
                    return
                }
            case .element(let bytes):
                guard let header else {
                    end(error: "protocol-violation")
                    return
                }
                let element: XMLElement
                do { element = try loop.parser.parseElement(bytes, in: header) } catch {
                    end(error: error.kind)
                    return
                }
                received(element)
            case .streamClose:
                serverClosedStream()
            }
        }
    }

    private func received(_ element: XMLElement) {
        loop.recorder.increment(StanzaKind.of(element).inboundCounter)
        switch stage {
        case .loggingIn(var machine):
            let actions = machine.received(element)
            stage = .loggingIn(machine)
            perform(actions)
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                end(error: "stream-" + Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors))
                return
            }
            handleStanza(element)
        case .connecting, .ended:
            break
        }
    }

    private func serverClosedStream() {
        switch stage {
        case .loggingIn(var machine):
            let actions = machine.streamClosed()
            stage = .loggingIn(machine)
            perform(actions)
        case .loggingOut(let since):
            recordLatency(loop.environment.metrics.logout, from: since, serviceFrom: since)
            end(error: nil)
        case .running:
            end(error: "stream-closed")
        case .connecting, .ended:
            break
        }
    }

    // MARK: - Login actions

    private func perform(_ actions: [LoginMachine.Action]) {
        for action in actions {
            if case .ended = stage { return }
            switch action {
            case .openStream:
                write(bytes: Stanza.streamHeader(to: loop.environment.configuration.domain))
            case .restartStream:
                framer.restart()
                header = nil
                write(bytes: Stanza.streamHeader(to: loop.environment.configuration.domain))
            case .send(let element):
                send(element)
            case .startTLS:
                startTLS()
            case .enterPhase(let next):
                let now = NIODeadline.now()
                if let currentPhase { record(phase: currentPhase, nanos: now - phaseStart) }
                currentPhase = next
                phaseStart = now
            case .unexpected(_, let reply):
                loop.recorder.increment(.unexpectedStanzas)
                if let reply { send(reply) }
            case .registered(let created):
                loop.recorder.increment(created ? .accountsCreated : .accountsExisted)
            case .loggedIn(let jid):
                loggedIn(jid: jid)
            case .fail(let error):
                end(error: error.kind)
            }
        }
    }

    private func startTLS() {
        guard let context, let tls = loop.environment.tls else {
            end(error: "tls-unavailable")
            return
        }
        do {
            let handler = try tls.makeHandler()
            try context.pipeline.syncOperations.addHandler(handler, position: .before(self))
        } catch {
            end(error: "tls")
        }
    }

    private func loggedIn(jid: String) {
        let now = NIODeadline.now()
        if let currentPhase { record(phase: currentPhase, nanos: now - phaseStart) }
        currentPhase = nil
        boundJID = jid
        stage = .running
        for (index, nanos) in phaseNanos.enumerated() where nanos > 0 {
            loop.recorder.recordLatency(loop.environment.metrics.phases[index],
                                        correctedNanoseconds: nanos, serviceNanoseconds: nanos)
        }
        recordLatency(loop.environment.metrics.login, from: intendedStart, serviceFrom: connectStart)
        loop.recorder.increment(.sessionsLoggedIn)
        loop.connectingCount -= 1
        loop.onlineCount += 1
        cancelTimeout()
        // The login instruction completed; the next step is due now.
        pc += 1
        stepIntended = now
        runProgram()
    }

    // MARK: - Writing

    func send(_ element: XMLElement) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        element.serialize(into: &bytes, parentNamespace: XMPPNamespace.client)
        loop.recorder.increment(StanzaKind.of(element).outboundCounter)
        write(bytes: bytes)
    }

    /// Writes; while a read is being handled the flush waits until the read is done, so the answers
    /// to one read leave in one write(2).
    private func write(bytes: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        if isReading {
            context.write(wrapOutboundOut(buffer), promise: nil)
            needsFlush = true
        } else {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
    }

    // MARK: - Ending

    /// Finish the current step, then log out (the run's load phase ended).
    func gracefulStop() {
        stopRequested = true
        switch stage {
        case .running:
            switch waiting {
            case .stayOnline, .timer, .nothing:
                stepTimer?.cancel()
                stepTimer = nil
                cancelTimeout()
                waiting = .nothing
                logout()
            default:
                break // the step in flight finishes first; runProgram then logs out
            }
        case .connecting, .loggingIn, .loggingOut, .ended:
            break
        }
    }

    /// Close now, counting `kind` as the reason.
    func abort(kind: String) {
        if case .ended = stage { return }
        end(error: kind)
    }

    func logout() {
        guard case .running = stage else { return }
        let now = NIODeadline.now()
        stage = .loggingOut(since: now)
        loop.environment.directory.setOnline(identity.slot, false)
        send(Stanza.presence(type: "unavailable"))
        write(bytes: Stanza.streamClose)
        scheduleTimeout(after: .seconds(5), .logout(since: now))
    }

    /// Ends the session once: records the outcome, frees the account, closes the channel.
    func end(error kind: String?) {
        let previous = stage
        if case .ended = previous { return }
        stage = .ended
        stepTimer?.cancel()
        stepTimer = nil
        cancelTimeout()
        switch previous {
        case .connecting, .loggingIn:
            loop.connectingCount -= 1
        case .running, .loggingOut:
            loop.onlineCount -= 1
        case .ended:
            break
        }
        if let kind {
            loop.recorder.recordError(kind: kind)
            loop.recorder.increment(.sessionsFailed)
        } else {
            loop.recorder.increment(.sessionsCompleted)
        }
        loop.environment.directory.release(identity.slot)
        loop.unregister(self)
        // Also while still connecting (a login timeout during a hung connect, or the run's deadline):
        // closing frees the socket now instead of at NIO's connect timeout. On a channel that is
        // already closed this only fails the (absent) promise.
        context?.close(promise: nil)
        loop.sessionEnded(self, failed: kind != nil)
    }

    // MARK: - Helpers

    func record(phase: LoginPhase, nanos: TimeAmount) {
        guard let index = LoginPhase.allCases.firstIndex(of: phase) else { return }
        phaseNanos[index] &+= UInt64(max(nanos.nanoseconds, 0))
    }

    func recordLatency(_ metric: MetricID, from intended: NIODeadline, serviceFrom actual: NIODeadline) {
        let now = NIODeadline.now()
        loop.recorder.recordLatency(metric, correctedNanoseconds: UInt64(max((now - intended).nanoseconds, 0)),
                                    serviceNanoseconds: UInt64(max((now - actual).nanoseconds, 0)))
    }

    /// Connect plus login must finish within the login step's timeout (typed error `timeout-login`).
    func armLoginTimeout() {
        scheduleTimeout(after: TimeAmount(script.loginTimeout), .login)
    }

    /// What a session does when its timeout comes due.
    enum TimeoutAction {
        /// Connect plus login took too long: `timeout-login`.
        case login
        /// The current step's answer did not come: `timeout-<step name>`.
        case step(name: String)
        /// The server did not close the stream after our `</stream:stream>`: the logout counts as done.
        case logout(since: NIODeadline)
    }

    func scheduleTimeout(after amount: TimeAmount, _ action: TimeoutAction) {
        timeoutGeneration &+= 1
        timeout = action
        loop.timeouts.arm(SessionTimeouts.Token(serial: identity.serial, generation: timeoutGeneration), after: amount)
    }

    func cancelTimeout() {
        guard timeout != nil else { return }
        timeoutGeneration &+= 1
        timeout = nil
    }

    /// Called by the loop's `SessionTimeouts`; acts only if `generation` is the timeout armed last.
    func timeoutExpired(generation: UInt32) {
        guard generation == timeoutGeneration, let action = timeout else { return }
        timeout = nil
        timeoutGeneration &+= 1
        switch action {
        case .login:
            abort(kind: "timeout-login")
        case .step(let name):
            stepFailed(kind: "timeout-" + name)
        case .logout(let since):
            recordLatency(loop.environment.metrics.logout, from: since, serviceFrom: since)
            end(error: nil)
        }
    }

    private func loginOptions() -> LoginOptions {
        for instruction in script.instructions {
            if case .login(let options) = instruction.operation { return options }
        }
        return LoginOptions()
    }

    private static func policy(_ mode: TLSMode?) -> LoginMachine.TLSPolicy {
        switch mode {
        case nil, .starttls?: return .startTLS
        case .direct?: return .direct
        case TLSMode.none?: return .none
        }
    }
}
