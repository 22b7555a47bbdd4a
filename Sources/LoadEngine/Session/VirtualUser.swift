import LoadProfile
import LoadResults
import NIOCore
import SessionCore
import XMPPCore

/// One virtual user: its `SessionMachine` (identity, script position, sequence numbers, login state)
/// and, while it has one, its connection. The user outlives its connections: a connection is
/// something it has, can lose and can replace; the machine decides, the user performs.
///
/// Performing means: connects (to the target the machine chose: an endpoint, a fallback, a
/// resumption's location), writes through the connection's codec, STARTTLS, closing, the session's
/// one coarse timer (on the loop's `SessionTimeouts` heap, cancelled lazily by generation) and its
/// one precise wake-up (a NIO scheduled callback, for think times and paced sends). It decides
/// nothing about the session: write stalls, fallbacks and resumption locations are the machine's.
/// Time comes from the event loop's `now` as a `SessionInstant`, so an `EmbeddedEventLoop`'s virtual
/// clock drives everything in tests.
///
/// Loop-bound: lives on its `LoopContext`'s event loop; registered there by serial while alive.
final class VirtualUser {
    // Stored properties are laid out in declaration order: the small ones follow `wake` to fill the
    // bytes after its handle, so an idle session's user object stays in its malloc size class
    // (memory per idle session, docs/ARCHITECTURE.md).
    private(set) var machine: SessionMachine
    unowned let loop: LoopContext
    private var connection: SessionChannelHandler?
    /// The last stanzas while the session is busy (nil while it rests: memory per idle session); offered
    /// to the loop's failure forensics when a failure ends the session.
    private var transcript: SessionTranscript?
    /// The precise wake-up, with this user as its handler.
    private var wake = LoopCallback()
    private var timeoutGeneration: UInt32 = 0
    private var hasEnded = false
    private let storedPhase: Int32

    /// The session's load phase.
    var phase: Int { Int(storedPhase) }
    /// The closed-model user (or open-model arrival) this session serves.
    var userIndex: Int { machine.identity.arrival }

    init(machine: SessionMachine, loop: LoopContext, phase: Int) {
        self.machine = machine
        self.loop = loop
        storedPhase = Int32(phase)  // phases are counted in the dozens
    }

    var serial: Int { machine.identity.serial }

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
        if transcript != nil, Self.isResting(&machine) { transcript = nil }
    }

    /// `machine.isResting(atLeast: SessionTranscript.restAfter)`, asked through an `inout` access: a
    /// non-mutating call on the stored property copied the whole machine (a retain and a release of each
    /// of its references, ~0.5 % of a login's CPU) for every event of a busy session (issue 42).
    private static func isResting(_ machine: inout SessionMachine) -> Bool {
        machine.isResting(atLeast: SessionTranscript.restAfter)
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
        case .start, .wakeFired, .stop, .writability, .churn, .keyDerived: break
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
                kind: kind, session: serial, account: machine.identity.username, node: machine.node?.label,
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

    /// The connection's socket stopped draining (or drains again): the machine pauses its program and
    /// decides when a stall ends the session.
    func connection(_ handler: SessionChannelHandler, writable: Bool) {
        guard handler === connection else { return }
        handle(.writability(writable))
    }

    /// The connect attempt failed before any channel became active: the machine decides whether the
    /// session falls back to another endpoint.
    func connectFailed(_ failure: ConnectionFailure) {
        connection = nil
        handle(.connectFailed(failure))
    }

    // MARK: - Performing

    private func perform(_ actions: [SessionAction]) {
        for action in actions {
            if hasEnded { return }
            switch action {
            case .connect(let target):
                loop.connector.connect(self, to: target)
            case .openStream:
                record(.sent, .ourStreamOpen(domain: machine.settings.domain))
                connection?.write(.header(domain: machine.settings.domain, from: machine.streamHeaderFrom))
            case .restartStream:
                record(.sent, .ourStreamOpen(domain: machine.settings.domain))
                connection?.restartStream()
                connection?.write(.header(domain: machine.settings.domain, from: machine.streamHeaderFrom))
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
            case .cancelTimeout:
                timeoutGeneration &+= 1
            case .armWake(let instant):
                wake.arm(at: loop.deadline(instant), on: loop.eventLoop, handler: self)
            case .cancelWake:
                wake.cancel()
            case .deriveKey(let request):
                loop.keyDerivations.derive(request, for: self)
            case .close:
                let closing = connection
                connection = nil
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
