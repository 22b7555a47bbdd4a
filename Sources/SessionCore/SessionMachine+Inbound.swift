import LoadProfile
import LoadResults
import XMPPCore

/// What the server pushes while the session runs: auto-answers (pings, subscriptions, unknown iqs),
/// the answers the current step waits for, MUC occupancy, and stamped messages.
extension SessionMachine {
    mutating func handleStanza(_ stanza: XMLElement) {
        if keepAliveAnswered(stanza) || serverFactsAnswered(stanza) { return }
        if stanza.name == "message" {
            switch ExtensionRequests.push(stanza) {
            case .archivedMessage:
                return host.recorder.increment(.archivedMessages)
            case .notification(let sent):
                // A notification of an item this session published: from its own PEP service (its
                // bare JID), the item id carrying the send time on this generator's clock.
                let elapsed = now.stampNanoseconds &- sent
                if sent <= now.stampNanoseconds, stanza.attribute("from") == identity.bareJID {
                    host.recorder.recordLatency(settings.metrics.pepNotify, correctedNanoseconds: elapsed, serviceNanoseconds: elapsed, node: nil)
                }
                return
            case .none:
                receivedMessage(stanza)
            }
        }
        if stanza.name == "presence", let room, let from = stanza.attribute("from"), from.hasPrefix(room.jid + "/") {
            // Occupants of our room, as the room announces them (for the fan-out's expected receipts).
            let nick = String(from.dropFirst(room.jid.count + 1))
            if stanza.attribute("type") == "unavailable" {
                room.occupants.remove(nick)
            } else if stanza.attribute("type") != "error" {
                room.occupants.insert(nick)
            }
        }
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            send(reply)
            switch reaction {
            case .answerPing: host.recorder.increment(.pingsAnswered)
            case .acceptSubscription: host.recorder.increment(.subscriptionsAccepted)
            default: break
            }
            return
        }
        guard case .running = stage else { return }
        if presenceEchoOverdue, stanza.name == "presence", stanza.attribute("from") == boundJID,
            stanza.attribute("type") == nil
        {
            // The echo came after the presence step stopped waiting for it: a slow server, not a silent one.
            presenceEchoOverdue = false
            host.recorder.increment(.presenceEchoLate)
        }
        switch waiting {
        case .iqResponse(let id):
            guard stanza.name == "iq", stanza.attribute("id") == id else { return }
            if stanza.attribute("type") == "result" {
                completeStep()
            } else {
                recordStanzaErrorText(stanza)
                stepFailed(.stanzaError(condition: Self.stanzaCondition(stanza)))
            }
        case .extensionResponse(let id, let feature):
            guard stanza.name == "iq", stanza.attribute("id") == id else { return }
            if stanza.attribute("type") == "result" {
                completeStep()
            } else if ExtensionRequests.unsupportedConditions.contains(Self.stanzaCondition(stanza)) {
                host.recorder.increment(ExtensionRequests.unsupportedCounter(feature))
                completeStep(measured: false)
            } else {
                recordStanzaErrorText(stanza)
                stepFailed(.stanzaError(condition: Self.stanzaCondition(stanza)))
            }
        case .ownPresence:
            guard stanza.name == "presence", stanza.attribute("from") == boundJID else { return }
            if stanza.attribute("type") == "error" {
                // Refused: not available after all, so not a message target.
                host.setOnline(identity.slot, false)
                isAvailable = false
                recordStanzaErrorText(stanza)
                stepFailed(.stanzaError(condition: Self.stanzaCondition(stanza)))
            } else {
                host.setOnline(identity.slot, true)
                completeStep()
            }
        case .mucJoin(let roomJID):
            mucJoinAnswer(stanza, roomJID: roomJID)
        case .stanza:
            if case .step(.wait(let condition)) = script.instructions[pc].operation, matches(stanza, condition) { completeStep() }
        case .nothing, .timer, .stayOnline:
            break
        }
    }

    private mutating func mucJoinAnswer(_ stanza: XMLElement, roomJID: String) {
        if stanza.name == "iq", stanza.attribute("id") == "muc-unlock" {
            // The instant-room configuration we sent as the room's creator was accepted (or not).
            return stanza.attribute("type") == "result"
                ? completeStep()
                : stepFailed(.mucConfigureError(condition: Self.stanzaCondition(stanza)))
        }
        guard stanza.name == "presence", let from = stanza.attribute("from"),
            (try? JID(from))?.bare.description == roomJID
        else { return }
        if stanza.attribute("type") == "error" {
            let condition = Self.stanzaCondition(stanza)
            // A room just created by another member stays locked until its owner configures it
            // (XEP-0045 §10.1): try again shortly, for up to ~5 s.
            if condition == "item-not-found", let room, room.joinRetries < 10 {
                room.joinRetries += 1
                armWake(at: now + .milliseconds(500), .mucJoinRetry)
                return
            }
            stepFailed(.mucError(condition: condition))
        } else if Self.statusCodes(stanza).contains("110") || from == "\(roomJID)/\(room?.nick ?? "")" {
            // Self-presence (XEP-0045 §7.2.2): status 110, or — from a service that predates status 110 —
            // the presence of our own nick, which the room sends only once we are in.
            room?.joinRetries = 0
            if Self.statusCodes(stanza).contains("201") {
                // We created the room: accept the default configuration (instant room) to unlock it.
                let form = XMLElement("x", namespace: XMPPNamespace.dataForms, attributes: [XMLAttribute("type", "submit")])
                let query = XMLElement("query", namespace: XMPPNamespace.mucOwner, children: [.element(form)])
                send(Stanza.iq(type: "set", id: "muc-unlock", to: roomJID, child: query))
                return
            }
            completeStep()
        }
    }

    /// Keeps the error's `<text/>` as the example of its `stanza-<condition>` kind.
    private mutating func recordStanzaErrorText(_ stanza: XMLElement) {
        let kind = SessionError.stanzaError(condition: Self.stanzaCondition(stanza)).kind
        host.recorder.recordErrorExample(kind: kind, text: SessionError.serverText(of: stanza))
    }

    private static func stanzaCondition(_ stanza: XMLElement) -> String {
        Stanza.errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas)
    }

    private static func statusCodes(_ presence: XMLElement) -> [String] {
        guard let x = presence.firstChild(named: "x", namespace: XMPPNamespace.mucUser) else { return [] }
        return x.children(named: "status", namespace: XMPPNamespace.mucUser).compactMap { $0.attribute("code") }
    }

    /// Whether `stanza` is what a `wait` step waits for: element name, type (a message without one is
    /// `normal`) and sender pattern, each when given.
    private mutating func matches(_ stanza: XMLElement, _ condition: WaitCondition) -> Bool {
        if let element = condition.element, stanza.name != element { return false }
        if let type = condition.type, (stanza.attribute("type") ?? (stanza.name == "message" ? "normal" : "")) != type {
            return false
        }
        if let from = condition.from {
            guard let actual = stanza.attribute("from"), GlobPattern(render(from)).matches(actual) else { return false }
        }
        return true
    }

    private mutating func receivedMessage(_ message: XMLElement) {
        let type = message.attribute("type") ?? "normal"
        if type == "error" {
            let kind = SessionNotice.messageError(condition: Self.stanzaCondition(message)).kind
            host.recorder.recordErrorExample(kind: kind, text: SessionError.serverText(of: message))
            host.recorder.recordError(kind: kind)
            return
        }
        guard let stamp = MessageStamp(in: message), stamp.runID == settings.runID else { return }
        var received = now.stampNanoseconds
        // a stamp of another generator: its send time placed on this generator's clock.
        if let theirs = stamp.clock, let ours = host.stampClock {
            received = UInt64(clamping: Int64(clamping: received) &- ours.shift(from: theirs))
        }
        let service = received >= stamp.sentNanos ? received - stamp.sentNanos : 0
        let corrected = received >= stamp.intendedNanos ? received - stamp.intendedNanos : service
        if type == "groupchat" {
            host.recorder.recordLatency(settings.metrics.mucMessage, correctedNanoseconds: corrected, serviceNanoseconds: service)
            let from = message.attribute("from") ?? ""
            host.recorder.groupchatReceived(room: String(from.prefix { $0 != "/" }))
        } else {
            host.recorder.recordLatency(settings.metrics.message, correctedNanoseconds: corrected, serviceNanoseconds: service)
            if let node = identity.node, let senderNode = stamp.node {
                host.recorder.recordNodeMessage(senderLabel: senderNode, receiver: node, nanoseconds: service)
            }
            host.recorder.messageReceived(
                sender: stamp.senderKey, sequence: stamp.sequence,
                receiver: UInt32(truncatingIfNeeded: identity.serial))
        }
    }
}

/// A `wait` step's sender pattern: `*` matches any run of characters, everything else literally.
public struct GlobPattern: Sendable, Equatable {
    private let parts: [Substring]

    public init(_ pattern: String) {
        parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
    }

    public func matches(_ text: String) -> Bool {
        if parts.count == 1 { return text == parts[0] }
        var rest = Substring(text)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts[parts.count - 1])
    }
}
