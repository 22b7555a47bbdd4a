// What the server pushes while the steps run, and what completes a waiting step.
import LoadProfile
import LoadResults
import XMPPCore

/// What the server pushes while the session runs: extension pushes (MAM pages, PEP notifications),
/// stamped messages, the room's occupancy, capability queries, auto-answers (pings, subscriptions,
/// unknown iqs), and the answer the current step waits for (`Waiting`); plus the step's timeout and
/// wake-ups, and going on after a resumption.
extension StepRunner {
    /// Handles a stanza; `running` is false while logging out (answers are still sent, no step waits).
    mutating func received(_ stanza: XMLElement, running: Bool, _ c: inout SessionContext) {
        if stanza.name == "message" {
            switch ExtensionRequests.push(stanza) {
            case .archivedMessage:
                return c.record(.count(.archivedMessages))
            case .notification(let sent):
                // A notification of an item this session published: from its own PEP service (its
                // bare JID), the item id carrying the send time on this generator's clock.
                let elapsed = c.now.stampNanoseconds &- sent
                if sent <= c.now.stampNanoseconds, stanza.attribute("from") == c.identity.bareJID {
                    c.record(.latency(c.settings.metrics.pepNotify, corrected: elapsed, service: elapsed))
                }
                return
            case .none:
                MessageStamping.received(stanza, identity: c.identity, settings: c.settings, now: c.now, clock: c.host.stampClock, into: &c.pending)
            }
        }
        room?.observe(stanza)
        if let answer = c.script.entityCaps?.discoInfoAnswer(to: stanza) { return c.send(answer) }  // what our caps mean
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            c.send(reply)
            switch reaction {
            case .answerPing: c.record(.count(.pingsAnswered))
            case .acceptSubscription: c.record(.count(.subscriptionsAccepted))
            default: break
            }
            return
        }
        guard running else { return }
        if presenceEchoOverdue, stanza.name == "presence", stanza.attribute("from") == c.boundJID, stanza.attribute("type") == nil {
            // The echo came after the presence step stopped waiting for it: a slow server, not a silent one.
            presenceEchoOverdue = false
            c.record(.count(.presenceEchoLate))
        }
        guard let answer = waiting.answer(to: stanza, boundJID: c.boundJID, room: room, matchesWait: { matchesWait($0, &c) }) else { return }
        switch answer {
        case .completed, .room(.joined):
            completeStep(&c)
        case .echoed:
            c.pending.append(.setOnline(true))
            completeStep(&c)
        case .unsupported(let counter):
            c.record(.count(counter))
            completeStep(measured: false, &c)
        case .refused(let error, let text):
            c.record(.errorExample(kind: error.kind, text: text))
            stepFailed(error, &c)
        case .presenceRefused(let error, let text):
            // Refused: not available after all, so not a message target.
            c.pending.append(.setOnline(false))
            isAvailable = false
            c.record(.errorExample(kind: error.kind, text: text))
            stepFailed(error, &c)
        case .room(.unlock(let configuration)):
            c.send(configuration)
        case .room(.retryLater):
            c.armWake(at: c.now + RoomMembership.joinRetryDelay, .mucJoinRetry)
        case .room(.failed(let error)):
            stepFailed(error, &c)
        }
    }

    /// Whether `stanza` is what the current `wait` step waits for: element name, type (a message
    /// without one is `normal`) and sender pattern, each when given.
    private func matchesWait(_ stanza: XMLElement, _ c: inout SessionContext) -> Bool {
        guard case .step(.wait(let condition)) = c.script.instructions[program.pc].operation else { return false }
        if let element = condition.element, stanza.name != element { return false }
        if let type = condition.type, (stanza.attribute("type") ?? (stanza.name == "message" ? "normal" : "")) != type {
            return false
        }
        if let from = condition.from {
            guard let actual = stanza.attribute("from"), GlobPattern(render(from, &c)).matches(actual) else { return false }
        }
        return true
    }

    /// The step's timeout came due: its row of the `Waiting` table says what that means.
    mutating func timedOut(step name: String, _ c: inout SessionContext) {
        switch waiting.timedOut(step: name) {
        case .echoMissing:
            // No echo within the bounded wait: the presence was sent and the session is available.
            c.record(.count(.presenceEchoMissing))
            presenceEchoOverdue = true
            c.pending.append(.setOnline(true))
            completeStep(measured: false, &c)
        case .failed(let error):
            stepFailed(error, &c)
        }
    }

    /// A think time ended (`due`: when), or a locked room may be joined again.
    mutating func woke(_ purpose: SessionWake, _ c: inout SessionContext) {
        switch purpose {
        case .think(let due):
            guard waiting == .timer else { return }
            waiting = .nothing
            program.advanceToNext(intended: due)
            run(&c)
        case .mucJoinRetry:
            if let room { c.send(room.joinPresence()) }
        case .reconnect:
            break
        }
    }

    /// The think time the program was in when its connection dropped (kept across a resumption).
    func suspendedThink(wake: SessionWake?) -> SessionInstant? {
        guard waiting == .timer, case .think(let due)? = wake else { return nil }
        return due
    }

    /// The stream was resumed: a think time still running is armed again, a step waiting for an
    /// answer gets its timeout again (the answer comes on the resumed stream), else the program runs on.
    mutating func resume(suspendedThink: SessionInstant?, _ c: inout SessionContext) {
        if let due = suspendedThink {
            if due > c.now { return c.armWake(at: due, .think(due: due)) }
            waiting = .nothing
            program.advanceToNext(intended: due)
        }
        if waiting == .nothing { return run(&c) }
        if waiting.awaitsServer {
            let instruction = c.script.instructions[program.pc]
            c.armTimeout(after: instruction.timeout, .step(name: instruction.name))
        }
    }

    /// True while the program rests: nothing to do but stay online, or in a think time that lasts at
    /// least `minimum` more.
    func isResting(atLeast minimum: Duration, wake: SessionWake?, now: SessionInstant) -> Bool {
        switch waiting {
        case .stayOnline: return true
        case .timer: if case .think(let due)? = wake { return due >= now + minimum } else { return false }
        default: return false
        }
    }
}
