// Routing what the server sends: login elements, stream errors, stream management, pushes and answers.
import LoadProfile
import LoadResults
import XMPPCore

/// What the server sends, routed to the feature it belongs to: the login, stream management,
/// keep-alive and probe answers, extension pushes, the room's occupancy, auto-answers (pings,
/// subscriptions, unknown iqs), the answer the current step waits for (`Waiting`), and stamped messages.
extension SessionMachine {
    mutating func received(_ element: XMLElement) {
        record(.count(StanzaKind.of(element).inboundCounter))
        switch stage {
        case .loggingIn(let progress):
            probe?.noteFeatures(element)
            perform(progress.machine.received(element))
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                return end(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)))
            }
            if element.namespace == XMPPNamespace.streamManagement { return streamManagementReceived(element) }
            streamManagement?.receivedStanza(element)
            handleStanza(element)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    private mutating func handleStanza(_ stanza: XMLElement) {
        if keepAliveAnswered(stanza) || probeAnswered(stanza) { return }
        if stanza.name == "message" {
            switch ExtensionRequests.push(stanza) {
            case .archivedMessage:
                return record(.count(.archivedMessages))
            case .notification(let sent):
                // A notification of an item this session published: from its own PEP service (its
                // bare JID), the item id carrying the send time on this generator's clock.
                let elapsed = now.stampNanoseconds &- sent
                if sent <= now.stampNanoseconds, stanza.attribute("from") == identity.bareJID {
                    record(.latency(settings.metrics.pepNotify, corrected: elapsed, service: elapsed))
                }
                return
            case .none:
                MessageStamping.received(stanza, identity: identity, settings: settings, now: now, clock: host.stampClock, into: &pending)
            }
        }
        room?.observe(stanza)
        if let answer = script.entityCaps?.discoInfoAnswer(to: stanza) { return send(answer) }  // the server asks what our caps mean
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            send(reply)
            switch reaction {
            case .answerPing: record(.count(.pingsAnswered))
            case .acceptSubscription: record(.count(.subscriptionsAccepted))
            default: break
            }
            return
        }
        guard case .running = stage else { return }
        if presenceEchoOverdue, stanza.name == "presence", stanza.attribute("from") == boundJID, stanza.attribute("type") == nil {
            // The echo came after the presence step stopped waiting for it: a slow server, not a silent one.
            presenceEchoOverdue = false
            record(.count(.presenceEchoLate))
        }
        let waitingFor = waiting
        guard let answer = waitingFor.answer(to: stanza, boundJID: boundJID, room: room, matchesWait: { matchesWait($0) }) else { return }
        switch answer {
        case .completed:
            completeStep()
        case .echoed:
            pending.append(.setOnline(true))
            completeStep()
        case .unsupported(let counter):
            record(.count(counter))
            completeStep(measured: false)
        case .refused(let error, let text):
            record(.errorExample(kind: error.kind, text: text))
            stepFailed(error)
        case .presenceRefused(let error, let text):
            // Refused: not available after all, so not a message target.
            pending.append(.setOnline(false))
            isAvailable = false
            record(.errorExample(kind: error.kind, text: text))
            stepFailed(error)
        case .room(.joined):
            completeStep()
        case .room(.unlock(let configuration)):
            send(configuration)
        case .room(.retryLater):
            armWake(at: now + RoomMembership.joinRetryDelay, .mucJoinRetry)
        case .room(.failed(let error)):
            stepFailed(error)
        }
    }

    /// Whether `stanza` is what the current `wait` step waits for: element name, type (a message
    /// without one is `normal`) and sender pattern, each when given.
    private mutating func matchesWait(_ stanza: XMLElement) -> Bool {
        guard case .step(.wait(let condition)) = script.instructions[program.pc].operation else { return false }
        if let element = condition.element, stanza.name != element { return false }
        if let type = condition.type, (stanza.attribute("type") ?? (stanza.name == "message" ? "normal" : "")) != type {
            return false
        }
        if let from = condition.from {
            guard let actual = stanza.attribute("from"), GlobPattern(render(from)).matches(actual) else { return false }
        }
        return true
    }

    // MARK: - Keep-alive and the server probe

    mutating func armKeepAlive() {
        guard let settings = script.keepAlive else { return }
        pending.append(.armKeepAlive(at: now + settings.interval))
    }

    mutating func keepAliveFired() {
        guard case .running = stage, let keepAliveSettings = script.keepAlive else { return }
        switch keepAlive.tick(keepAliveSettings, id: "ka\(requestCounter &+ 1)", domain: settings.domain, now: now, writeBlocked: writeBlocked) {
        case .connectionDead: return end(.keepAliveTimeout)
        case .ping(let ping):
            requestCounter &+= 1
            send(ping)
        case .whitespace: pending.append(.sendRaw(" "))
        case .skipped: break
        }
        armKeepAlive()
    }

    /// True when `stanza` answers our keep-alive ping (it is then recorded and consumed).
    private mutating func keepAliveAnswered(_ stanza: XMLElement) -> Bool {
        guard let answer = keepAlive.answer(stanza) else { return false }
        switch answer {
        case .roundTrip(let since): recordLatency(settings.metrics.keepAlivePing, from: since, serviceFrom: since)
        case .unsupported: record(.count(.pingsUnsupported))
        case .answered: break
        }
        return true
    }

    /// True when `stanza` answers one of the probing session's queries (reported and consumed).
    private mutating func probeAnswered(_ stanza: XMLElement) -> Bool {
        guard probe != nil, let answer = ServerFactsProbe.answer(stanza, domain: settings.domain, now: now) else { return false }
        switch answer {
        case .facts(let facts):
            pending.append(.learned(facts))
        case .clockSample(let sent, let utc, let next):
            pending.append(.clockSample(sent: sent, received: now, utc: utc))
            if let next { send(next) }
        case .consumed:
            break
        }
        return true
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
