import LoadProfile
import LoadResults
import NIOCore
import XMPPCore

/// Running the compiled profile after login: the program counter walks `script.instructions`; a step
/// that needs an answer sets `waiting` and returns, and `handleStanza` or a timer completes it.
extension VirtualUserHandler {
    /// Runs instructions until one has to wait (or the program ends).
    func runProgram() {
        isRunningProgram = true
        defer { isRunningProgram = false }
        while case .running = stage {
            if stopRequested {
                logout()
                return
            }
            guard pc < script.instructions.count else {
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
                    loops.append(LoopFrame(start: pc, remaining: nil, until: .now() + TimeAmount(duration)))
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
                if let until = frame.until, NIODeadline.now() >= until { again = false }
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
            case .login:
                pc += 1 // already logged in: `repeat: forever` came round again
            case .logout:
                logout()
                return
            default:
                start(instruction)
                if case .nothing = waiting { continue }
                return
            }
        }
    }

    /// Starts one step. Steps that complete at once call `completeStep()` (which advances `pc`).
    private func start(_ instruction: SessionScript.Instruction) {
        stepStart = NIODeadline.now()
        waiting = .nothing
        switch instruction.operation {
        case .rosterGet:
            let id = nextRequestID()
            send(Stanza.iq(type: "get", id: id, child: XMLElement("query", namespace: XMPPNamespace.roster)))
            expect(.iqResponse(id: id), instruction)
        case .rosterSet(let action):
            let id = nextRequestID()
            send(Stanza.iq(type: "set", id: id, child: rosterItem(for: action)))
            expect(.iqResponse(id: id), instruction)
        case .presence(let action):
            startPresence(action, instruction)
        case .message(let action):
            sendMessages(action)
            completeStep(measured: false)
        case .muc(let action):
            startMUC(action, instruction)
        case .iq(let action):
            startIQ(action, instruction)
        case .wait(let condition):
            waiting = .stanza(condition)
            scheduleStepTimeout(condition.timeout, instruction)
        case .think(let think):
            let delay = think.sample(using: &rng)
            let due = stepStart + TimeAmount(delay)
            waiting = .timer
            let bound = NIOLoopBound(self, eventLoop: loop.eventLoop)
            stepTimer = loop.eventLoop.scheduleTask(deadline: due) {
                let handler = bound.value
                handler.stepTimer = nil
                handler.waiting = .nothing
                handler.pc += 1
                handler.stepIntended = due
                handler.runProgram()
            }
        case .stayOnline:
            waiting = .stayOnline
            if loop.isStopping { gracefulStop() }
        case .login, .logout, .loopStart, .loopEnd, .choose, .jump:
            preconditionFailure("control instructions are handled by runProgram")
        }
    }

    private func expect(_ what: Waiting, _ instruction: SessionScript.Instruction) {
        waiting = what
        scheduleStepTimeout(instruction.timeout, instruction)
    }

    private func scheduleStepTimeout(_ duration: Duration, _ instruction: SessionScript.Instruction) {
        scheduleTimeout(after: TimeAmount(duration), .step(name: instruction.name))
    }

    /// The current step finished well: record it (when it waited for an answer), advance, go on.
    ///
    /// Fire-and-forget steps (a message, a directed presence) pass `measured: false`: they have no
    /// answer to time, and a message's latency is measured end to end by its receiver.
    func completeStep(measured: Bool = true) {
        let instruction = script.instructions[pc]
        if measured {
            switch instruction.operation {
            case .think, .stayOnline:
                break
            default:
                recordLatency(instruction.metric, from: stepIntended, serviceFrom: stepStart)
            }
        }
        cancelTimeout()
        waiting = .nothing
        pc += 1
        stepIntended = NIODeadline.now()
        loop.recorder.increment(.stepsCompleted)
        if !isRunningProgram { runProgram() }
    }

    /// The current step failed: count it; go on or end the session as the step says.
    func stepFailed(kind: String) {
        guard pc < script.instructions.count else { return end(error: kind) }
        let instruction = script.instructions[pc]
        cancelTimeout()
        waiting = .nothing
        if instruction.continueOnError {
            loop.recorder.recordError(kind: kind)
            pc += 1
            stepIntended = NIODeadline.now()
            if !isRunningProgram { runProgram() }
        } else {
            end(error: kind)
        }
    }

    // MARK: - Incoming stanzas while running

    func handleStanza(_ stanza: XMLElement) {
        if stanza.name == "message" { receivedMessage(stanza) }
        if stanza.name == "presence", let room, let from = stanza.attribute("from"), from.hasPrefix(room.jid + "/") {
            // Occupants of our room, as the room announces them (for the fan-out's expected receipts).
            let nick = String(from.dropFirst(room.jid.count + 1))
            if stanza.attribute("type") == "unavailable" { roomOccupants.remove(nick) }
            else if stanza.attribute("type") != "error" { roomOccupants.insert(nick) }
        }
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            send(reply)
            switch reaction {
            case .answerPing: loop.recorder.increment(.pingsAnswered)
            case .acceptSubscription: loop.recorder.increment(.subscriptionsAccepted)
            default: break
            }
            return
        }
        switch waiting {
        case .iqResponse(let id):
            guard stanza.name == "iq", stanza.attribute("id") == id else { return }
            if stanza.attribute("type") == "result" {
                completeStep()
            } else {
                stepFailed(kind: "stanza-" + Stanza.errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas))
            }
        case .ownPresence:
            guard stanza.name == "presence", stanza.attribute("from") == boundJID else { return }
            if stanza.attribute("type") == "error" {
                stepFailed(kind: "stanza-" + Stanza.errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas))
            } else {
                // Available now: the server routes messages for the bare JID here, so others may pick it.
                loop.environment.directory.setOnline(identity.slot, true)
                completeStep()
            }
        case .mucJoin(let roomJID):
            if stanza.name == "iq", stanza.attribute("id") == "muc-unlock" {
                // The instant-room configuration we sent as the room's creator was accepted.
                return stanza.attribute("type") == "result" ? completeStep()
                    : stepFailed(kind: "muc-configure-" + Stanza.errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas))
            }
            guard stanza.name == "presence", let from = stanza.attribute("from"),
                  (try? JID(from))?.bare.description == roomJID else { return }
            if stanza.attribute("type") == "error" {
                let condition = Stanza.errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas)
                // A room just created by another member stays locked until its owner configures it
                // (XEP-0045 §10.1): try again shortly, for up to ~5 s.
                if condition == "item-not-found", mucJoinRetries < 10, let room {
                    mucJoinRetries += 1
                    let bound = NIOLoopBound(self, eventLoop: loop.eventLoop)
                    stepTimer = loop.eventLoop.scheduleTask(in: .milliseconds(500)) {
                        let handler = bound.value
                        handler.stepTimer = nil
                        handler.send(Stanza.presence(to: "\(room.jid)/\(room.nick)", extra: [XMLElement("x", namespace: XMPPNamespace.muc)]))
                    }
                    return
                }
                stepFailed(kind: "muc-" + condition)
            } else if Self.isSelfPresence(stanza) {
                mucJoinRetries = 0
                if Self.statusCodes(stanza).contains("201") {
                    // We created the room: accept the default configuration (instant room) to unlock it.
                    let form = XMLElement("x", namespace: XMPPNamespace.dataForms, attributes: [XMLAttribute("type", "submit")])
                    let query = XMLElement("query", namespace: XMPPNamespace.mucOwner, children: [.element(form)])
                    send(Stanza.iq(type: "set", id: "muc-unlock", to: roomJID, child: query))
                    return
                }
                completeStep()
            }
        case .stanza(let condition):
            if matches(stanza, condition) { completeStep() }
        case .nothing, .timer, .stayOnline:
            break
        }
    }

    /// MUC self-presence carries status code 110 (XEP-0045 §7.2.2).
    private static func isSelfPresence(_ presence: XMLElement) -> Bool {
        statusCodes(presence).contains("110")
    }

    private static func statusCodes(_ presence: XMLElement) -> [String] {
        guard let x = presence.firstChild(named: "x", namespace: XMPPNamespace.mucUser) else { return [] }
        return x.children(named: "status", namespace: XMPPNamespace.mucUser).compactMap { $0.attribute("code") }
    }

    private func matches(_ stanza: XMLElement, _ condition: WaitCondition) -> Bool {
        if let element = condition.element, stanza.name != element { return false }
        if let type = condition.type, (stanza.attribute("type") ?? (stanza.name == "message" ? "normal" : "")) != type { return false }
        if let from = condition.from {
            let pattern = from.render { self.variable($0) }
            guard let actual = stanza.attribute("from"), Self.glob(pattern, matches: actual) else { return false }
        }
        return true
    }

    /// `*` matches any run of characters; everything else literally.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1 { return pattern == text }
        var rest = Substring(text)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts.last!)
    }

    // MARK: - Messages

    private func receivedMessage(_ message: XMLElement) {
        let type = message.attribute("type") ?? "normal"
        if type == "error" {
            loop.recorder.recordError(kind: "message-" + Stanza.errorCondition(of: message, conditionNamespace: XMPPNamespace.stanzas))
            return
        }
        guard let stamp = MessageStamp(in: message), stamp.runID == loop.environment.runID else { return }
        let now = loop.environment.nanos(.now())
        let service = now >= stamp.sentNanos ? now - stamp.sentNanos : 0
        let corrected = now >= stamp.intendedNanos ? now - stamp.intendedNanos : service
        if type == "groupchat" {
            loop.recorder.recordLatency(loop.environment.metrics.mucMessage, correctedNanoseconds: corrected, serviceNanoseconds: service)
            let from = message.attribute("from") ?? ""
            loop.recorder.groupchatReceived(room: String(from.prefix { $0 != "/" }))
        } else {
            loop.recorder.recordLatency(loop.environment.metrics.message, correctedNanoseconds: corrected, serviceNanoseconds: service)
            loop.recorder.messageReceived(sender: stamp.sender, sequence: stamp.sequence,
                                          receiver: UInt32(truncatingIfNeeded: identity.serial), latencyNanoseconds: corrected)
        }
    }

    private func sendMessages(_ action: MessageAction) {
        guard let to = messageTarget(action.to) else {
            loop.recorder.recordError(kind: "message-no-online-target")
            return
        }
        sendStamped(to: to, type: action.type.rawValue, body: text(of: action.body), intended: stepIntended)
    }

    /// The text of a message body: the loop's cached filler of that size, or the rendered template.
    private func text(of body: MessageBody) -> String {
        switch body {
        case .size(let size): return loop.fillerBody(size: size)
        case .literal(let template): return template.render { self.variable($0) }
        }
    }

    func sendStamped(to: String, type: String, body: String, intended: NIODeadline) {
        messageSequence &+= 1
        let now = NIODeadline.now()
        let stamp = MessageStamp(runID: loop.environment.runID, sender: UInt32(truncatingIfNeeded: identity.serial),
                                 sequence: messageSequence, sentNanos: loop.environment.nanos(now),
                                 intendedNanos: loop.environment.nanos(min(intended, now)))
        send(Stanza.message(to: to, type: type, body: body, extra: [stamp.element]))
        if type == "groupchat" {
            loop.recorder.groupchatSent(room: to, occupants: roomOccupants.count)
        } else {
            loop.recorder.messageSent(sender: stamp.sender, sequence: stamp.sequence, sentAt: stamp.sentNanos)
        }
    }

    private func messageTarget(_ target: MessageTarget) -> String? {
        let configuration = loop.environment.configuration
        switch target {
        case .randomOnline:
            guard let slot = loop.environment.directory.randomOnline(excluding: identity.slot, using: &rng) else { return nil }
            return "\(configuration.accountPrefix)\(configuration.accounts.lowerBound + slot)@\(configuration.domain)"
        case .jid(let template):
            return template.render { self.variable($0) }
        case .next:
            let slot = (identity.slot + 1) % configuration.accounts.count
            return "\(configuration.accountPrefix)\(configuration.accounts.lowerBound + slot)@\(configuration.domain)"
        case .selfJID:
            return boundJID ?? identity.bareJID
        }
    }

    // MARK: - Presence, roster, iq, MUC

    private func startPresence(_ action: PresenceAction, _ instruction: SessionScript.Instruction) {
        switch action {
        case .available(let show, let status, let priority):
            send(Stanza.presence(show: show, status: status.map { $0.render { self.variable($0) } }, priority: priority))
            expect(.ownPresence, instruction)
        case .directed(let to, let type, let show, let status):
            send(Stanza.presence(to: to.render { self.variable($0) }, type: type, show: show,
                                 status: status.map { $0.render { self.variable($0) } }))
            completeStep(measured: false)
        case .unavailable(let status):
            send(Stanza.presence(type: "unavailable", status: status.map { $0.render { self.variable($0) } }))
            loop.environment.directory.setOnline(identity.slot, false)
            completeStep(measured: false)
        case .subscribe(let to):
            send(Stanza.presence(to: bare(to), type: "subscribe"))
            completeStep(measured: false)
        case .unsubscribe(let to):
            send(Stanza.presence(to: bare(to), type: "unsubscribe"))
            completeStep(measured: false)
        }
    }

    private func bare(_ template: Template) -> String {
        let rendered = template.render { self.variable($0) }
        return (try? JID(rendered))?.bare.description ?? rendered
    }

    private func rosterItem(for action: RosterAction) -> XMLElement {
        var attributes: [XMLAttribute] = []
        var children: [XMLNode] = []
        switch action {
        case .get:
            break
        case .add(let jid, let name, let groups):
            attributes.append(XMLAttribute("jid", bare(jid)))
            if let name { attributes.append(XMLAttribute("name", name.render { self.variable($0) })) }
            children = groups.map { .element(Stanza.textElement("group", $0, namespace: XMPPNamespace.roster)) }
        case .rename(let jid, let name):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("name", name.render { self.variable($0) }))
        case .remove(let jid):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("subscription", "remove"))
        }
        let item = XMLElement("item", namespace: XMPPNamespace.roster, attributes: attributes, children: children)
        return XMLElement("query", namespace: XMPPNamespace.roster, children: [.element(item)])
    }

    private func startIQ(_ action: IQAction, _ instruction: SessionScript.Instruction) {
        let id = nextRequestID()
        let domain = loop.environment.configuration.domain
        func target(_ template: Template?, default value: String?) -> String? {
            template.map { $0.render { self.variable($0) } } ?? value
        }
        switch action {
        case .ping(let to):
            send(Stanza.iq(type: "get", id: id, to: target(to, default: domain), child: XMLElement("ping", namespace: XMPPNamespace.ping)))
        case .discoInfo(let to):
            send(Stanza.iq(type: "get", id: id, to: target(to, default: domain), child: XMLElement("query", namespace: XMPPNamespace.discoInfo)))
        case .version(let to):
            send(Stanza.iq(type: "get", id: id, to: target(to, default: domain), child: XMLElement("query", namespace: XMPPNamespace.version)))
        case .vcard(let to):
            send(Stanza.iq(type: "get", id: id, to: target(to, default: nil), child: XMLElement("vCard", namespace: XMPPNamespace.vcard)))
        case .raw(let xml, let expectResult):
            let rendered = xml.render { name in name == "id" ? id : self.variable(name) }
            writeRaw(rendered)
            guard expectResult else { return completeStep(measured: false) }
        }
        expect(.iqResponse(id: id), instruction)
    }

    private func startMUC(_ action: MUCAction, _ instruction: SessionScript.Instruction) {
        switch action {
        case .join(let roomTemplate, let service, let nick, let history):
            let roomName = roomTemplate.render { self.variable($0) }
            let serviceName = service?.render { self.variable($0) } ?? "conference.\(loop.environment.configuration.domain)"
            let nickname = nick?.render { self.variable($0) } ?? identity.username
            let roomJID = roomName.contains("@") ? roomName : "\(roomName)@\(serviceName)"
            room = (roomJID, nickname)
            var x = XMLElement("x", namespace: XMPPNamespace.muc)
            if let history {
                x.children.append(.element(XMLElement("history", namespace: XMPPNamespace.muc,
                                                      attributes: [XMLAttribute("maxstanzas", String(history))])))
            }
            send(Stanza.presence(to: "\(roomJID)/\(nickname)", extra: [x]))
            expect(.mucJoin(room: roomJID), instruction)
        case .send(let body, _, _):
            guard let room else { return stepFailed(kind: "muc-not-joined") }
            sendStamped(to: room.jid, type: "groupchat", body: text(of: body), intended: stepIntended)
            completeStep(measured: false)
        case .changeNick(let template):
            guard let current = room else { return stepFailed(kind: "muc-not-joined") }
            let nickname = template.render { self.variable($0) }
            room = (current.jid, nickname)
            send(Stanza.presence(to: "\(current.jid)/\(nickname)"))
            expect(.mucJoin(room: current.jid), instruction)
        case .leave:
            guard let current = room else { return stepFailed(kind: "muc-not-joined") }
            send(Stanza.presence(to: "\(current.jid)/\(current.nick)", type: "unavailable"))
            room = nil
            roomOccupants = []
            completeStep(measured: false)
        }
    }

    private func writeRaw(_ xml: String) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: xml.utf8.count)
        buffer.writeString(xml)
        loop.recorder.increment(.stanzasOutOther)
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    private func nextRequestID() -> String {
        requestCounter &+= 1
        return "q\(requestCounter)"
    }

    /// Values of `${name}` in templates for this session.
    func variable(_ name: String) -> String? {
        let configuration = loop.environment.configuration
        switch name {
        case "index": return String(identity.accountNumber)
        case "user": return identity.username
        case "domain": return configuration.domain
        case "jid": return identity.bareJID
        case "resource": return resource
        case "seq": return String(messageSequence)
        case "run_id": return loop.environment.runID
        case "session": return String(identity.serial)
        case "room": return room?.jid
        case "nick": return room?.nick
        case "random": return String(UInt32.random(in: 0...UInt32.max, using: &rng))
        case "prev_index", "next_index":
            // Neighbours on a ring: the profile's ring_first...ring_last when set, else the run's accounts.
            let first = loop.environment.variables["ring_first"].flatMap(Int.init) ?? configuration.accounts.lowerBound
            let last = loop.environment.variables["ring_last"].flatMap(Int.init) ?? configuration.accounts.upperBound
            let count = max(last - first + 1, 1)
            let step = name == "next_index" ? 1 : count - 1
            return String(first + (identity.accountNumber - first + step) % count)
        default: return loop.environment.variables[name]
        }
    }
}
