// SessionMachine: What arrives: stanzas routed to stream management, keep-alive, the probe, the request features and the steps.
import LoadProfile
import LoadResults
import XMPPCore

extension SessionMachine {
    // MARK: - What arrives

    mutating func received(_ element: XMLElement) {
        shared.count(StanzaKind.of(element).inboundCounter)
        switch connection.stage {
        case .loggingIn:
            probe?.noteFeatures(element)
            loginOutcome(login.handle(probe: probe, &shared) { $0.received(element) })
        case .running, .loggingOut:
            if element.name == "error" && element.namespace == XMPPNamespace.streams {
                return end(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)))
            }
            if element.namespace == XMPPNamespace.streamManagement { return streamManagementReceived(element) }
            streamManagement?.receivedStanza(element)
            if answeredKeepAliveOrProbe(element) { return }
            pushed(element)
        case .idle, .connecting, .awaitingReconnect, .ended:
            break
        }
    }

    mutating func streamManagementReceived(_ element: XMLElement) {
        guard let session = streamManagement else { return shared.count(.unexpectedStanzas) }
        switch session.received(element, &shared) {
        case .handled: break
        case .off(let kind):
            shared.record(.error(kind: kind))
            streamManagement = nil
        case .unexpected: shared.count(.unexpectedStanzas)
        }
    }

    /// True when `stanza` answers our keep-alive ping or the probe's queries (it is then consumed).
    mutating func answeredKeepAliveOrProbe(_ stanza: XMLElement) -> Bool {
        if let answer = keepAlive.answer(stanza) {
            switch answer {
            case .roundTrip(let since): shared.recordLatency(shared.settings.metrics.keepAlivePing, from: since, serviceFrom: since)
            case .unsupported: shared.count(.pingsUnsupported)
            case .answered: break
            }
            return true
        }
        guard probe != nil, let answer = ServerFactsProbe.answer(stanza, domain: shared.settings.domain, now: shared.now) else {
            return false
        }
        switch answer {
        case .facts(let facts): shared.actions.append(.learned(facts))
        case .clockSample(let sent, let utc, let next):
            shared.actions.append(.clockSample(sent: sent, received: shared.now, utc: utc))
            if let next { shared.send(next) }
        case .consumed: break
        }
        return true
    }

    /// What the server pushes while the session runs (or logs out): feature pushes, stamped messages,
    /// the room's occupancy, capability queries, auto-answers — and the answer the current step waits
    /// for.
    mutating func pushed(_ stanza: XMLElement) {
        // The profile's request features see a push first (a MAM page, a PEP notification, a
        // blocking-list change); what one consumes goes no further.
        if let requests, requestPush(stanza, requests) { return }
        if stanza.name == "message" { messaging.received(stanza, node: connection.node(shared), &shared) }
        muc.observe(stanza)
        if let answer = presence.capsAnswer(to: stanza, shared) { return shared.send(answer) }  // what our caps mean
        let reaction = AutoResponder.react(to: stanza)
        if let reply = reaction.reply {
            shared.send(reply)
            switch reaction {
            case .answerPing: shared.count(.pingsAnswered)
            case .acceptSubscription: shared.count(.subscriptionsAccepted)
            default: break
            }
            return
        }
        guard connection.isRunning else { return }
        presence.noteLateEcho(stanza, boundJID: login.boundJID, &shared)
        guard let owner = program.waitingOn else { return }
        let outcome: StepOutcome?
        switch owner {
        case .presence: outcome = presence.answer(stanza, boundJID: login.boundJID, &shared)
        case .roster: outcome = roster.answer(stanza, &shared)
        case .query: outcome = query.answer(stanza, &shared)
        case .muc: outcome = muc.answer(stanza, &shared)
        case .wait:
            var tools = program.lend(templateValues)
            let matches = program.matchesWait(stanza, tools: &tools, shared)
            program.takeBack(tools)
            outcome = matches ? .completed(measured: true) : nil
        case .feature(let index): outcome = requestAnswer(stanza, index: Int(index))
        }
        guard let outcome else { return }
        take(outcome, owner: owner)
        runProgram()
    }

    mutating func requestPush(_ stanza: XMLElement, _ set: RequestFeatureSet) -> Bool {
        set.first { index, feature in
            var context = RequestContext(tools: program.lend(templateValues), counters: shared.script.featureCounters[index], timeout: .zero)
            let consumed = feature.push(stanza, &shared, &context)
            program.takeBack(context.tools)
            return consumed
        }
    }

    mutating func requestAnswer(_ stanza: XMLElement, index: Int) -> StepOutcome? {
        guard let requests else { return nil }
        var context = RequestContext(tools: program.lend(templateValues), counters: shared.script.featureCounters[index], timeout: .zero)
        let outcome = requests.instance(index).answer(stanza, &shared, &context)
        program.takeBack(context.tools)
        return outcome
    }
}
