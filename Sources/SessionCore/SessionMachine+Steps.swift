import LoadProfile
import LoadResults
import XMPPCore

/// Running the compiled profile after login: the program counter walks `script.instructions`; a step
/// that needs an answer sets `waiting` and returns, and an arriving stanza, the timeout or the
/// wake-up completes it.
extension SessionMachine {
    /// Moves to instruction `index`; the step there is due at `intended`.
    mutating func advance(to index: Int, intended: SessionInstant) {
        pc = index
        stepIntended = intended
    }

    /// Runs instructions until one has to wait (or the program ends).
    mutating func runProgram() {
        isRunningProgram = true
        defer { isRunningProgram = false }
        while case .running = stage {
            if writeBlocked && !stopRequested { return }  // resumed when the socket drains
            if stopRequested || pc >= script.instructions.count {
                logout()
                return
            }
            let instruction = script.instructions[pc]
            switch instruction.operation {
            case .loopStart(let count, let end):
                switch count {
                case .times(let n) where n <= 0:
                    pc = end
                case .times(let n):
                    loops.append(LoopFrame(start: pc, remaining: n, until: nil))
                    pc += 1
                case .duration(let duration):
                    loops.append(LoopFrame(start: pc, remaining: nil, until: now + duration))
                    pc += 1
                case .forever:
                    loops.append(LoopFrame(start: pc, remaining: nil, until: nil))
                    pc += 1
                }
            case .loopEnd(let start):
                guard var frame = loops.popLast(), frame.start == start else {
                    pc += 1
                    continue
                }
                var again = true
                if let remaining = frame.remaining {
                    frame.remaining = remaining - 1
                    again = remaining - 1 > 0
                }
                if let until = frame.until, now >= until { again = false }
                if again {
                    loops.append(frame)
                    pc = start + 1
                } else {
                    pc += 1
                }
            case .choose(let cumulative, let targets):
                let point = Double.random(in: 0..<(cumulative.last ?? 1), using: &rng)
                pc = targets[cumulative.firstIndex { point < $0 } ?? targets.count - 1]
            case .jump(let target):
                pc = target
            case .step(.login):
                pc += 1  // already logged in
            case .step(.logout):
                logout()
                return
            case .step(let action):
                start(action, instruction)
                if case .nothing = waiting { continue }
                return
            }
        }
    }

    /// Starts one step. Steps that complete at once call `completeStep` (which advances `pc`).
    private mutating func start(_ action: StepAction, _ instruction: SessionScript.Instruction) {
        stepStart = now
        waiting = .nothing
        switch action {
        case .roster(.get):
            let id = nextRequestID()
            send(Stanza.iq(type: "get", id: id, child: XMLElement("query", namespace: XMPPNamespace.roster)))
            expect(.iqResponse(id: id), instruction)
        case .roster(let action):
            let id = nextRequestID()
            send(Stanza.iq(type: "set", id: id, child: rosterItem(for: action)))
            expect(.iqResponse(id: id), instruction)
        case .presence(let action):
            startPresence(action, instruction)
        case .message(let action):
            sendMessage(action)
            completeStep(measured: false)
        case .muc(let action):
            startMUC(action, instruction)
        case .iq(let action):
            startIQ(action, instruction)
        case .protocolExtension(let step):
            startExtension(step, instruction)
        case .wait(let condition):
            waiting = .stanza
            armTimeout(after: condition.timeout, .step(name: instruction.name))
        case .think(let think):
            let due = stepStart + think.sample(using: &rng)
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
            preconditionFailure("login, logout and control flow are handled by runProgram")
        }
    }

    /// How long the presence step waits for its echo at most (less when the step's timeout is
    /// shorter). A server that echoes does so within a round trip; one that never does (jabberd2)
    /// would otherwise hold every session for the whole step timeout. 2 s is ten times the slowest echo
    /// seen on a saturated Prosody (login.yaml, 500 logins in 5 s on this 2-core machine, login p99
    /// 3.8 s: presence p50 46 ms, p99 119 ms, max 208 ms), yet short enough that a session on a silent
    /// server reaches its next step soon; an echo later than this is counted (`presence_echo_late`).
    static let presenceEchoWait = Duration.seconds(2)

    private mutating func expect(_ what: Waiting, _ instruction: SessionScript.Instruction) {
        waiting = what
        armTimeout(after: instruction.timeout, .step(name: instruction.name))
    }

    /// The current step finished well: record it (when it waited for an answer), advance, go on.
    ///
    /// Fire-and-forget steps (a message, a directed presence) pass `measured: false`: they have no
    /// answer to time, and a message's latency is measured end to end by its receiver.
    mutating func completeStep(measured: Bool = true) {
        let instruction = script.instructions[pc]
        if measured {
            recordLatency(instruction.metric, from: stepIntended, serviceFrom: stepStart)
        }
        timeout = nil
        waiting = .nothing
        advance(to: pc + 1, intended: now)
        host.recorder.increment(.stepsCompleted)
        if !isRunningProgram { runProgram() }
    }

    /// The current step failed: count it; go on or end the session as the step says.
    mutating func stepFailed(_ error: SessionError) {
        guard pc < script.instructions.count else { return end(error) }
        let instruction = script.instructions[pc]
        timeout = nil
        waiting = .nothing
        if instruction.continueOnError {
            host.recorder.recordError(kind: error.kind)
            advance(to: pc + 1, intended: now)
            if !isRunningProgram { runProgram() }
        } else {
            end(error)
        }
    }

    // MARK: - Presence, roster, iq, MUC

    private mutating func startPresence(_ action: PresenceAction, _ instruction: SessionScript.Instruction) {
        switch action {
        case .available(let show, let status, let priority):
            send(Stanza.presence(show: show, status: status.map { render($0) }, priority: priority))
            // A `to: random` target once the server has taken the presence in: at its echo, or when
            // the bounded wait for one is over (`presenceStepEnded`). Not at the send: a message to
            // the bare JID that overtakes the presence inside the server finds no available resource
            // (Prosody answers service-unavailable: 2 of 20,000 demo messages were lost that way).
            isAvailable = true
            presenceEchoOverdue = false
            // The echo (RFC 6121 §4.2.2) is a courtesy some servers skip (jabberd2): wait for it a
            // bounded time, then go on without it (docs/PROFILES.md, "When the server stays silent").
            waiting = .ownPresence
            armTimeout(after: min(instruction.timeout, Self.presenceEchoWait), .step(name: instruction.name))
        case .directed(let to, let type, let show, let status):
            send(Stanza.presence(to: render(to), type: type, show: show, status: status.map { render($0) }))
            completeStep(measured: false)
        case .unavailable(let status):
            send(Stanza.presence(type: "unavailable", status: status.map { render($0) }))
            host.setOnline(identity.slot, false)
            isAvailable = false
            completeStep(measured: false)
        case .subscribe(let to):
            send(Stanza.presence(to: bare(to), type: "subscribe"))
            completeStep(measured: false)
        case .unsubscribe(let to):
            send(Stanza.presence(to: bare(to), type: "unsubscribe"))
            completeStep(measured: false)
        }
    }

    private mutating func bare(_ template: Template) -> String {
        let rendered = render(template)
        return (try? JID(rendered))?.bare.description ?? rendered
    }

    private mutating func rosterItem(for action: RosterAction) -> XMLElement {
        var attributes: [XMLAttribute] = []
        var children: [XMLNode] = []
        switch action {
        case .get:
            break
        case .add(let jid, let name, let groups):
            attributes.append(XMLAttribute("jid", bare(jid)))
            if let name { attributes.append(XMLAttribute("name", render(name))) }
            children = groups.map { .element(Stanza.textElement("group", $0, namespace: XMPPNamespace.roster)) }
        case .rename(let jid, let name):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("name", render(name)))
        case .remove(let jid):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("subscription", "remove"))
        }
        let item = XMLElement("item", namespace: XMPPNamespace.roster, attributes: attributes, children: children)
        return XMLElement("query", namespace: XMPPNamespace.roster, children: [.element(item)])
    }

    private mutating func startIQ(_ action: IQAction, _ instruction: SessionScript.Instruction) {
        let id = nextRequestID()
        func target(_ machine: inout SessionMachine, _ template: Template?, default value: String?) -> String? {
            template.map { machine.render($0) } ?? value
        }
        let query: XMLElement
        let to: String?
        switch action {
        case .ping(let template):
            to = target(&self, template, default: settings.domain)
            query = XMLElement("ping", namespace: XMPPNamespace.ping)
        case .discoInfo(let template):
            to = target(&self, template, default: settings.domain)
            query = XMLElement("query", namespace: XMPPNamespace.discoInfo)
        case .version(let template):
            to = target(&self, template, default: settings.domain)
            query = XMLElement("query", namespace: XMPPNamespace.version)
        case .vcard(let template):
            to = target(&self, template, default: nil)
            query = XMLElement("vCard", namespace: XMPPNamespace.vcard)
        case .raw(let xml, let expectResult):
            let rendered = xml.render { name in name == SessionVariable.id.rawValue ? id : self.variable(name) }
            host.recorder.increment(.stanzasOutOther)
            pending.append(.sendRaw(rendered))
            guard expectResult else { return completeStep(measured: false) }
            return expect(.iqResponse(id: id), instruction)
        }
        send(Stanza.iq(type: "get", id: id, to: to, child: query))
        expect(.iqResponse(id: id), instruction)
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
            host.recorder.increment(ExtensionRequests.unsupportedCounter(step.feature))
            completeStep(measured: false)
        }
    }

    private mutating func startMUC(_ action: MUCAction, _ instruction: SessionScript.Instruction) {
        switch action {
        case .join(let roomTemplate, let service, let nick, let history):
            let roomName = render(roomTemplate)
            let serviceName = service.map { render($0) } ?? "conference.\(settings.domain)"
            let nickname = nick.map { render($0) } ?? identity.username
            let roomJID = roomName.contains("@") ? roomName : "\(roomName)@\(serviceName)"
            room = RoomMembership(jid: roomJID, nick: nickname)
            var x = XMLElement("x", namespace: XMPPNamespace.muc)
            if let history {
                x.children.append(
                    .element(
                        XMLElement(
                            "history", namespace: XMPPNamespace.muc,
                            attributes: [XMLAttribute("maxstanzas", String(history))])))
            }
            send(Stanza.presence(to: "\(roomJID)/\(nickname)", extra: [x]))
            expect(.mucJoin(room: roomJID), instruction)
        case .send(let body, _, _):
            guard let room else { return stepFailed(.mucNotJoined) }
            sendStamped(to: room.jid, type: "groupchat", body: text(of: body), intended: stepIntended)
            completeStep(measured: false)
        case .changeNick(let template):
            guard let current = room else { return stepFailed(.mucNotJoined) }
            let nickname = render(template)
            current.nick = nickname
            send(Stanza.presence(to: "\(current.jid)/\(nickname)"))
            expect(.mucJoin(room: current.jid), instruction)
        case .leave:
            guard let current = room else { return stepFailed(.mucNotJoined) }
            send(Stanza.presence(to: "\(current.jid)/\(current.nick)", type: "unavailable"))
            room = nil
            completeStep(measured: false)
        }
    }

    private mutating func nextRequestID() -> String {
        requestCounter &+= 1
        return "q\(requestCounter)"
    }

    // MARK: - Messages out

    private mutating func sendMessage(_ action: MessageAction) {
        guard let to = messageTarget(action.to) else {
            host.recorder.recordError(kind: SessionNotice.noOnlineTarget.kind)
            return
        }
        sendStamped(to: to, type: action.type.rawValue, body: text(of: action.body), intended: stepIntended)
    }

    /// The text of a message body: the loop's cached filler of that size, or the rendered template.
    private mutating func text(of body: MessageBody) -> String {
        switch body {
        case .size(let size): return host.fillerBody(size: size)
        case .literal(let template): return render(template)
        }
    }

    /// Sends a message carrying our stamp (run, sender, sequence, intended and actual send time).
    mutating func sendStamped(to: String, type: String, body: String, intended: SessionInstant) {
        messageSequence &+= 1
        var stamp = MessageStamp(
            runID: settings.runID, sender: UInt32(truncatingIfNeeded: identity.serial),
            sequence: messageSequence, sentNanos: now.stampNanoseconds,
            intendedNanos: min(intended, now).stampNanoseconds, node: identity.node?.label)
        stamp.generator = settings.generatorKey  // generators sharing a --run-id without --segment
        stamp.clock = host.stampClock  // the generator's clock, in runs of several generators
        send(Stanza.message(to: to, type: type, body: body, extra: [stamp.element]))
        if type == "groupchat" {
            host.recorder.groupchatSent(room: to, occupants: room?.occupants.count ?? 0)
        } else {
            host.recorder.messageSent(sender: stamp.senderKey, sequence: stamp.sequence)
        }
    }

    private mutating func messageTarget(_ target: MessageTarget) -> String? {
        switch target {
        case .randomOnline:
            guard let slot = host.randomOnlineSlot(excluding: identity.slot, using: &rng) else { return nil }
            return settings.bareJID(slot: slot)
        case .jid(let template):
            return render(template)
        case .next:
            return settings.bareJID(slot: settings.nextSlot(after: identity.accountNumber))
        case .selfJID:
            return boundJID ?? identity.bareJID
        }
    }

    // MARK: - Template variables

    mutating func render(_ template: Template) -> String {
        template.render { self.variable($0) }
    }

    /// The value of `${name}` for this session: the session's own variables (`SessionVariable`), else
    /// the script's profile's `variables:`.
    mutating func variable(_ name: String) -> String? {
        guard let known = SessionVariable(rawValue: name) else { return script.variables[name] }
        switch known {
        case .index: return String(identity.accountNumber)
        case .user: return identity.username
        case .domain: return settings.domain
        case .jid: return identity.bareJID
        case .resource: return resource
        case .seq: return String(messageSequence)
        case .runID: return settings.runID
        case .session: return String(identity.serial)
        case .room: return room?.jid
        case .nick: return room?.nick
        case .random: return String(UInt32.random(in: 0...UInt32.max, using: &rng))
        case .id: return script.variables[name]
        case .prevIndex, .nextIndex:
            // Neighbours on a ring: the profile's ring_first...ring_last when set, else the whole run's
            // accounts (every generator of a --segment run).
            let first = script.variables["ring_first"].flatMap(Int.init) ?? settings.runAccounts.lowerBound
            let last = script.variables["ring_last"].flatMap(Int.init) ?? settings.runAccounts.upperBound
            let count = max(last - first + 1, 1)
            let step = known == .nextIndex ? 1 : count - 1
            return String(first + (identity.accountNumber - first + step) % count)
        }
    }
}
