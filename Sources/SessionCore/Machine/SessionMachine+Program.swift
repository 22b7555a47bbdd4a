// SessionMachine: The program (steps started and their outcomes taken) and the timers that fire into it.
import LoadProfile
import LoadResults
import XMPPCore

extension SessionMachine {
    // MARK: - The program

    /// The values other features keep for templates (`${resource}`, `${seq}`, `${room}`, `${nick}`).
    var templateValues: TemplateValues {
        TemplateValues(resource: login.resource, sequence: messaging.sequence, room: muc.room?.jid, nick: muc.room?.nick)
    }

    /// Runs steps until one has to wait, the socket stops draining, or the session logs out.
    mutating func runProgram() {
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
    mutating func startStep(_ action: StepAction, _ instruction: SessionScript.Instruction) {
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
    mutating func take(_ outcome: StepOutcome, owner: ProgramFeature.Owner) {
        if let error = program.take(outcome, owner: owner, &shared) { end(error) }
    }

    // MARK: - Timers

    mutating func timeoutFired() {
        if let due = login.deadline(shared), due <= shared.now { return end(login.timedOut()) }
        if connection.logoutUnanswered(&shared) { return end(nil) }
        if connection.stalled(shared) { return end(.writeStalled) }
        guard connection.isRunning else { return }
        if let owner = program.timedOut(shared) { stepTimedOut(owner) }
        if connection.isRunning, let due = keepAlive.due, due <= shared.now { keepAliveTick() }
    }

    /// The current step's timeout came: its owner says what that means.
    mutating func stepTimedOut(_ owner: ProgramFeature.Owner) {
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

    mutating func keepAliveTick() {
        guard let settings = shared.script.keepAlive else { return }
        switch keepAlive.tick(settings, domain: shared.settings.domain, now: shared.now, writeBlocked: connection.writeBlocked) {
        case .connectionDead: return end(.keepAliveTimeout)
        case .ping(let ping): shared.send(ping)
        case .whitespace: shared.actions.append(.sendRaw(" "))
        case .skipped: break
        }
        keepAlive.arm(settings, now: shared.now)
    }

    mutating func wakeFired() {
        if reconnect.due(shared) { return reconnectNow() }
        guard connection.isRunning else { return }
        muc.retryDue(&shared)
        if program.thinkEnded(shared) { runProgram() }
    }
}
