// The step interpreter: runs the compiled profile after login, one step at a time.
import LoadProfile
import LoadResults
import XMPPCore

/// Runs the compiled profile after login: `StepProgram` walks the control flow, the builders make the
/// stanzas (`StepRequests`, `RoomMembership`, `ExtensionRequests`, `MessageStamping`), and a step that
/// needs an answer sets `waiting` (a row of the `Waiting` table) and returns; an arriving stanza
/// (`StepRunner+Answers`), the timeout or the wake-up completes it. Only runs while the session is
/// logged in; it asks the session to log out or end through `SessionContext.request`.
///
/// Timing: each step counts from the time it was due (the end of the previous step plus think time)
/// and from when it actually started.
struct StepRunner {
    var program: StepProgram
    var waiting: Waiting = .nothing
    /// True while `run` is on the stack: step completions inside it must not re-enter it.
    private var isRunning = false
    /// The MUC room we are in or joining (nil: none; boxed, most sessions never join one).
    var room: RoomMembership?
    var messageSequence: UInt32 = 0
    /// Our available presence was sent (others may pick us as a `to: random` target).
    var isAvailable = false
    /// The presence step completed without its echo; an echo arriving now is counted as late.
    var presenceEchoOverdue = false

    init(start: SessionInstant) { program = StepProgram(start: start) }

    /// A fresh login: forget what belonged to the previous stream and run from the first step after
    /// the login, due now.
    mutating func begin(_ c: inout SessionContext) {
        forget()
        program.advance(to: c.script.firstInstructionAfterLogin, intended: c.now)
        run(&c)
    }

    /// Forgets what belonged to a lost stream: the room, the step in flight, open loops.
    mutating func forget() {
        isAvailable = false
        room = nil
        waiting = .nothing
        program.forgetLoops()
    }

    /// Runs steps until one has to wait, the socket stops draining, or the session must log out.
    mutating func run(_ c: inout SessionContext) {
        isRunning = true
        defer { isRunning = false }
        while c.request == nil {
            if c.writeBlocked && !c.stopRequested { return }  // resumed when the socket drains
            guard !c.stopRequested, case .step(let action, let instruction) = program.next(in: c.script, now: c.now, using: &c.rng) else {
                c.request = .logout
                return
            }
            start(action, instruction, &c)
            if waiting != .nothing { return }
        }
    }

    /// Runs on when the program is idle (after the socket drained).
    mutating func runIfIdle(_ c: inout SessionContext) {
        if waiting == .nothing, !isRunning { run(&c) }
    }

    /// The run's load phase ended: true when the step in flight can be dropped now (think time, stay
    /// online, nothing), so the session logs out at once; else it finishes first and `run` logs out.
    mutating func stopNow(_ c: inout SessionContext) -> Bool {
        switch waiting {
        case .stayOnline, .timer, .nothing:
            c.cancelWake()
            c.timeout = nil
            waiting = .nothing
            return true
        default:
            return false
        }
    }

    private mutating func start(_ action: StepAction, _ instruction: SessionScript.Instruction, _ c: inout SessionContext) {
        program.stepStart = c.now
        waiting = .nothing
        switch action {
        case .roster(let roster):
            let id = c.nextRequestID()
            c.send(StepRequests.roster(roster, id: id) { render($0, &c) })
            expect(.iqResponse(id: id), instruction, &c)
        case .presence(let presence):
            c.send(StepRequests.presence(presence, caps: c.script.entityCaps) { render($0, &c) })
            switch presence {
            case .available:
                // A `to: random` target once the server has taken the presence in: at its echo, or when
                // the bounded wait for one is over. Not at the send: a message to the bare JID that
                // overtakes the presence inside the server finds no available resource (Prosody answers
                // service-unavailable: 2 of 20,000 demo messages were lost that way). The echo (RFC 6121
                // §4.2.2) is a courtesy some servers skip (jabberd2): wait for it a bounded time.
                isAvailable = true
                presenceEchoOverdue = false
                expect(.ownPresence, instruction, &c)
            case .unavailable:
                c.pending.append(.setOnline(false))
                isAvailable = false
                completeStep(measured: false, &c)
            case .directed, .subscribe, .unsubscribe:
                completeStep(measured: false, &c)
            }
        case .message(let message):
            sendMessage(message, &c)
            completeStep(measured: false, &c)
        case .muc(let muc):
            startMUC(muc, instruction, &c)
        case .iq(let iq):
            let id = c.nextRequestID()
            let request = StepRequests.iq(
                iq, id: id, domain: c.settings.domain, render: { render($0, &c) }, variable: { variable($0, &c) })
            switch request {
            case .stanza(let stanza):
                c.send(stanza)
                expect(.iqResponse(id: id), instruction, &c)
            case .raw(let text, let expectResult):
                c.record(.count(.stanzasOutOther))
                c.pending.append(.sendRaw(text))
                expectResult ? expect(.iqResponse(id: id), instruction, &c) : completeStep(measured: false, &c)
            }
        case .protocolExtension(let step):
            startExtension(step, instruction, &c)
        case .wait(let condition):
            waiting = .stanza
            c.armTimeout(after: condition.timeout, .step(name: instruction.name))
        case .think(let think):
            let due = program.stepStart + think.sample(using: &c.rng)
            waiting = .timer
            c.armWake(at: due, .think(due: due))
        case .stayOnline:
            waiting = .stayOnline
            if c.host.isStopping {
                c.stopRequested = true
                waiting = .nothing
                c.request = .logout
            }
        case .login, .logout, .loop, .choose:
            preconditionFailure("login, logout and control flow are handled by StepProgram")
        }
    }

    /// Waits for `what`, for as long as its row of the `Waiting` table says.
    private mutating func expect(_ what: Waiting, _ instruction: SessionScript.Instruction, _ c: inout SessionContext) {
        waiting = what
        c.armTimeout(after: what.timeout(for: instruction.timeout), .step(name: instruction.name))
    }

    /// The current step finished well: record it (when it waited for an answer), advance, go on.
    /// Fire-and-forget steps pass `measured: false`: a message's latency is measured by its receiver.
    mutating func completeStep(measured: Bool = true, _ c: inout SessionContext) {
        if measured {
            c.recordLatency(c.script.instructions[program.pc].metric, from: program.stepIntended, serviceFrom: program.stepStart)
        }
        c.timeout = nil
        waiting = .nothing
        program.advanceToNext(intended: c.now)
        c.record(.count(.stepsCompleted))
        if !isRunning { run(&c) }
    }

    /// The current step failed: count it; go on or end the session as the step says.
    mutating func stepFailed(_ error: SessionError, _ c: inout SessionContext) {
        guard program.pc < c.script.instructions.count else {
            c.request = .end(error)
            return
        }
        c.timeout = nil
        waiting = .nothing
        guard c.script.instructions[program.pc].continueOnError else {
            c.request = .end(error)
            return
        }
        c.record(.error(kind: error.kind))
        program.advanceToNext(intended: c.now)
        if !isRunning { run(&c) }
    }

    /// An extension step (`ExtensionRequests` holds what each sends and what answers it).
    private mutating func startExtension(_ step: ExtensionStep, _ instruction: SessionScript.Instruction, _ c: inout SessionContext) {
        let id = c.nextRequestID()
        var with: String?
        if case .archiveQuery(_, let template?) = step { with = render(template, &c) }
        switch ExtensionRequests.start(step, id: id, with: with, sentNanoseconds: c.now.stampNanoseconds, offersClientState: c.offersClientState) {
        case .iq(let request):
            c.send(request)
            expect(.extensionResponse(id: id, feature: step.feature), instruction, &c)
        case .nonza(let nonza):
            c.send(nonza)
            completeStep(measured: false, &c)
        case .unsupported:
            c.record(.count(ExtensionRequests.unsupportedCounter(step.feature)))
            completeStep(measured: false, &c)
        }
    }

    private mutating func startMUC(_ action: MUCAction, _ instruction: SessionScript.Instruction, _ c: inout SessionContext) {
        if case .join(let roomTemplate, let service, let nick, let history) = action {
            let joining = RoomMembership(
                room: render(roomTemplate, &c), service: service.map { render($0, &c) } ?? "conference.\(c.settings.domain)",
                nick: nick.map { render($0, &c) } ?? c.identity.username)
            room = joining
            c.send(joining.joinPresence(history: history))
            return expect(.mucJoin(room: joining.jid), instruction, &c)
        }
        guard let current = room else { return stepFailed(.mucNotJoined, &c) }
        switch action {
        case .send(let body, _, _):
            sendStamped(to: current.jid, type: "groupchat", body: text(of: body, &c), intended: program.stepIntended, &c)
            completeStep(measured: false, &c)
        case .changeNick(let template):
            c.send(current.changeNick(to: render(template, &c)))
            expect(.mucJoin(room: current.jid), instruction, &c)
        case .leave:
            c.send(current.leavePresence())
            room = nil
            completeStep(measured: false, &c)
        case .join:
            break
        }
    }

    // MARK: - Messages out

    private mutating func sendMessage(_ action: MessageAction, _ c: inout SessionContext) {
        guard let to = messageTarget(action.to, &c) else { return c.record(.error(kind: SessionNotice.noOnlineTarget.kind)) }
        sendStamped(to: to, type: action.type.rawValue, body: text(of: action.body, &c), intended: program.stepIntended, &c)
    }

    /// The text of a message body: the loop's cached filler of that size, or the rendered template.
    private mutating func text(of body: MessageBody, _ c: inout SessionContext) -> String {
        switch body {
        case .size(let size): return c.host.fillerBody(size: size)
        case .literal(let template): return render(template, &c)
        }
    }

    /// Sends a message carrying our stamp (`MessageStamping`).
    private mutating func sendStamped(to: String, type: String, body: String, intended: SessionInstant, _ c: inout SessionContext) {
        messageSequence &+= 1
        let stamp = MessageStamping.stamp(
            sequence: messageSequence, identity: c.identity, settings: c.settings, now: c.now, intended: intended, clock: c.host.stampClock)
        c.send(StampedMessage(to: to, type: type, body: body, stamp: stamp))
        c.record(MessageStamping.sent(stamp, type: type, to: to, occupants: room?.occupants.count ?? 0))
    }

    private func messageTarget(_ target: MessageTarget, _ c: inout SessionContext) -> String? {
        switch target {
        case .randomOnline:
            guard let slot = c.host.randomOnlineSlot(excluding: c.identity.slot, using: &c.rng) else { return nil }
            return c.settings.bareJID(slot: slot)
        case .jid(let template): return render(template, &c)
        case .next: return c.settings.bareJID(slot: c.settings.nextSlot(after: c.identity.accountNumber))
        case .selfJID: return c.boundJID ?? c.identity.bareJID
        }
    }

    // MARK: - Templates

    func render(_ template: Template, _ c: inout SessionContext) -> String {
        template.render { variable($0, &c) }
    }

    /// The value of `${name}` for this session: the session's own variables (`SessionVariable`), else
    /// the profile's `variables:`.
    func variable(_ name: String, _ c: inout SessionContext) -> String? {
        guard let known = SessionVariable(rawValue: name) else { return c.script.variables[name] }
        return known.value(
            identity: c.identity, settings: c.settings, resource: c.resource, sequence: messageSequence, room: room,
            variables: c.script.variables, generator: &c.rng)
    }
}
