// Running the compiled profile after login: starting each step, completing or failing it.
import LoadProfile
import LoadResults
import XMPPCore

/// The step interpreter's glue: `StepProgram` walks the control flow, the builders make the stanzas
/// (`StepRequests`, `RoomMembership`, `ExtensionRequests`), and a step that needs an answer sets
/// `waiting` (a row of the `Waiting` table) and returns; an arriving stanza, the timeout or the
/// wake-up completes it.
extension SessionMachine {
    /// Runs steps until one has to wait (or the program ends).
    mutating func runProgram() {
        isRunningProgram = true
        defer { isRunningProgram = false }
        while case .running = stage {
            if writeBlocked && !stopRequested { return }  // resumed when the socket drains
            guard !stopRequested, case .step(let action, let instruction) = program.next(in: script, now: now, using: &rng) else {
                return logout()
            }
            start(action, instruction)
            if waiting != .nothing { return }
        }
    }

    /// Starts one step. Steps that complete at once call `completeStep` (which advances the program).
    private mutating func start(_ action: StepAction, _ instruction: SessionScript.Instruction) {
        program.stepStart = now
        waiting = .nothing
        switch action {
        case .roster(let roster):
            let id = nextRequestID()
            send(StepRequests.roster(roster, id: id) { render($0) })
            expect(.iqResponse(id: id), instruction)
        case .presence(let presence):
            send(StepRequests.presence(presence, caps: script.entityCaps) { render($0) })
            switch presence {
            case .available:
                // A `to: random` target once the server has taken the presence in: at its echo, or when
                // the bounded wait for one is over. Not at the send: a message to the bare JID that
                // overtakes the presence inside the server finds no available resource (Prosody answers
                // service-unavailable: 2 of 20,000 demo messages were lost that way). The echo (RFC 6121
                // §4.2.2) is a courtesy some servers skip (jabberd2): wait for it a bounded time.
                isAvailable = true
                presenceEchoOverdue = false
                expect(.ownPresence, instruction)
            case .unavailable:
                pending.append(.setOnline(false))
                isAvailable = false
                completeStep(measured: false)
            case .directed, .subscribe, .unsubscribe:
                completeStep(measured: false)
            }
        case .message(let message):
            sendMessage(message)
            completeStep(measured: false)
        case .muc(let muc):
            startMUC(muc, instruction)
        case .iq(let iq):
            let id = nextRequestID()
            switch StepRequests.iq(iq, id: id, domain: settings.domain, render: { render($0) }, variable: { variable($0) }) {
            case .stanza(let request):
                send(request)
                expect(.iqResponse(id: id), instruction)
            case .raw(let text, let expectResult):
                record(.count(.stanzasOutOther))
                pending.append(.sendRaw(text))
                expectResult ? expect(.iqResponse(id: id), instruction) : completeStep(measured: false)
            }
        case .protocolExtension(let step):
            startExtension(step, instruction)
        case .wait(let condition):
            waiting = .stanza
            armTimeout(after: condition.timeout, .step(name: instruction.name))
        case .think(let think):
            let due = program.stepStart + think.sample(using: &rng)
            waiting = .timer
            armWake(at: due, .think(due: due))
        case .stayOnline:
            waiting = .stayOnline
            if host.isStopping {
                stopRequested = true
                waiting = .nothing
                logout()
            }
        case .login, .logout, .loop, .choose:
            preconditionFailure("login, logout and control flow are handled by StepProgram")
        }
    }

    /// Waits for `what`, for as long as its row of the `Waiting` table says.
    private mutating func expect(_ what: Waiting, _ instruction: SessionScript.Instruction) {
        waiting = what
        armTimeout(after: what.timeout(for: instruction.timeout), .step(name: instruction.name))
    }

    /// The current step finished well: record it (when it waited for an answer), advance, go on.
    ///
    /// Fire-and-forget steps (a message, a directed presence) pass `measured: false`: they have no
    /// answer to time, and a message's latency is measured end to end by its receiver.
    mutating func completeStep(measured: Bool = true) {
        if measured {
            recordLatency(script.instructions[program.pc].metric, from: program.stepIntended, serviceFrom: program.stepStart)
        }
        timeout = nil
        waiting = .nothing
        program.advanceToNext(intended: now)
        record(.count(.stepsCompleted))
        if !isRunningProgram { runProgram() }
    }

    /// The current step failed: count it; go on or end the session as the step says.
    mutating func stepFailed(_ error: SessionError) {
        guard program.pc < script.instructions.count else { return end(error) }
        timeout = nil
        waiting = .nothing
        guard script.instructions[program.pc].continueOnError else { return end(error) }
        record(.error(kind: error.kind))
        program.advanceToNext(intended: now)
        if !isRunningProgram { runProgram() }
    }

    /// An extension step (`ExtensionRequests` holds what each sends and what answers it).
    private mutating func startExtension(_ step: ExtensionStep, _ instruction: SessionScript.Instruction) {
        let id = nextRequestID()
        var with: String?
        if case .archiveQuery(_, let template?) = step { with = render(template) }
        switch ExtensionRequests.start(step, id: id, with: with, sentNanoseconds: now.stampNanoseconds, offersClientState: offersClientState) {
        case .iq(let request):
            send(request)
            expect(.extensionResponse(id: id, feature: step.feature), instruction)
        case .nonza(let nonza):
            send(nonza)
            completeStep(measured: false)
        case .unsupported:
            record(.count(ExtensionRequests.unsupportedCounter(step.feature)))
            completeStep(measured: false)
        }
    }

    private mutating func startMUC(_ action: MUCAction, _ instruction: SessionScript.Instruction) {
        if case .join(let roomTemplate, let service, let nick, let history) = action {
            let joining = RoomMembership(
                room: render(roomTemplate), service: service.map { render($0) } ?? "conference.\(settings.domain)",
                nick: nick.map { render($0) } ?? identity.username)
            room = joining
            send(joining.joinPresence(history: history))
            return expect(.mucJoin(room: joining.jid), instruction)
        }
        guard let current = room else { return stepFailed(.mucNotJoined) }
        switch action {
        case .send(let body, _, _):
            sendStamped(to: current.jid, type: "groupchat", body: text(of: body), intended: program.stepIntended)
            completeStep(measured: false)
        case .changeNick(let template):
            send(current.changeNick(to: render(template)))
            expect(.mucJoin(room: current.jid), instruction)
        case .leave:
            send(current.leavePresence())
            room = nil
            completeStep(measured: false)
        case .join:
            break
        }
    }

    mutating func nextRequestID() -> String {
        requestCounter &+= 1
        return "q\(requestCounter)"
    }

    // MARK: - Messages out

    private mutating func sendMessage(_ action: MessageAction) {
        guard let to = messageTarget(action.to) else { return record(.error(kind: SessionNotice.noOnlineTarget.kind)) }
        sendStamped(to: to, type: action.type.rawValue, body: text(of: action.body), intended: program.stepIntended)
    }

    /// The text of a message body: the loop's cached filler of that size, or the rendered template.
    private mutating func text(of body: MessageBody) -> String {
        switch body {
        case .size(let size): return host.fillerBody(size: size)
        case .literal(let template): return render(template)
        }
    }

    /// Sends a message carrying our stamp (`MessageStamping`).
    mutating func sendStamped(to: String, type: String, body: String, intended: SessionInstant) {
        messageSequence &+= 1
        let stamp = MessageStamping.stamp(
            sequence: messageSequence, identity: identity, settings: settings, now: now, intended: intended, clock: host.stampClock)
        send(Stanza.message(to: to, type: type, body: body, extra: [stamp.element]))
        record(MessageStamping.sent(stamp, type: type, to: to, occupants: room?.occupants.count ?? 0))
    }

    private mutating func messageTarget(_ target: MessageTarget) -> String? {
        switch target {
        case .randomOnline:
            guard let slot = host.randomOnlineSlot(excluding: identity.slot, using: &rng) else { return nil }
            return settings.bareJID(slot: slot)
        case .jid(let template): return render(template)
        case .next: return settings.bareJID(slot: settings.nextSlot(after: identity.accountNumber))
        case .selfJID: return boundJID ?? identity.bareJID
        }
    }

    // MARK: - Templates

    mutating func render(_ template: Template) -> String {
        template.render { self.variable($0) }
    }

    /// The value of `${name}` for this session: the session's own variables (`SessionVariable`), else
    /// the profile's `variables:`.
    mutating func variable(_ name: String) -> String? {
        guard let known = SessionVariable(rawValue: name) else { return script.variables[name] }
        return known.value(
            identity: identity, settings: settings, resource: resource, sequence: messageSequence, room: room,
            variables: script.variables, generator: &rng)
    }

    /// True while the session rests for a while: logged in with nothing to do but stay online, or in a
    /// think time that lasts at least `minimum` more. The engine lets go of per-session buffers then.
    public func isResting(atLeast minimum: Duration) -> Bool {
        guard case .running = stage else { return false }
        switch waiting {
        case .stayOnline: return true
        case .timer: if case .think(let due) = wake { return due >= now + minimum } else { return false }
        default: return false
        }
    }
}
