import LoadProfile
import LoadResults
import Testing
import XMPPCore

@testable import SessionCore

/// The session's features one by one, with plain values: each decides in a value the parts only route.
@Suite struct SessionFeatureTests {
    static func element(_ xml: String) throws -> XMLElement {
        let parser = StanzaParser()
        let header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        return try parser.parseElement(Array(xml.utf8), in: header)
    }

    // MARK: KeepAliveFeature

    @Test func keepAliveTicksPingsThenDeclaresAnUnansweredPingDead() throws {
        var feature = KeepAliveFeature()
        let ping = KeepAlive(kind: .ping, interval: .seconds(30))
        feature.arm(ping, now: .zero)
        #expect(feature.due == SessionInstant.zero + .seconds(30), "the feature keeps its own timer")
        guard case .ping(let request) = feature.tick(ping, domain: "d", now: .zero, writeBlocked: false) else {
            Issue.record("no ping")
            return
        }
        #expect(request.attribute("id") == "ka1")
        #expect(feature.due == nil, "a tick consumes the timer; the machine arms the next")
        #expect(feature.tick(ping, domain: "d", now: .zero, writeBlocked: false) == .connectionDead)
        #expect(feature.tick(ping, domain: "d", now: .zero, writeBlocked: true) == .skipped, "blocked: nothing sent")
        guard case .ping(let next) = feature.tick(ping, domain: "d", now: .zero, writeBlocked: false) else {
            Issue.record("no second ping")
            return
        }
        #expect(next.attribute("id") == "ka2", "pings are numbered by the feature itself")
    }

    @Test(arguments: [
        ("<iq type='result' id='ka1'/>", KeepAliveFeature.Answer?.some(.roundTrip(since: .zero))),
        ("<iq type='error' id='ka1'/>", .some(.unsupported)),
        ("<iq type='result' id='other'/>", nil),
        ("<iq type='get' id='ka1'/>", nil),
    ])
    func keepAliveAnswers(xml: String, expected: KeepAliveFeature.Answer?) throws {
        var feature = KeepAliveFeature()
        _ = feature.tick(KeepAlive(kind: .ping, interval: .seconds(1)), domain: "d", now: .zero, writeBlocked: false)
        #expect(feature.answer(try Self.element(xml)) == expected)
    }

    @Test func anErrorAnswerTurnsKeepAlivesIntoWhitespaceForGood() throws {
        var feature = KeepAliveFeature()
        let ping = KeepAlive(kind: .ping, interval: .seconds(1))
        _ = feature.tick(ping, domain: "d", now: .zero, writeBlocked: false)
        #expect(feature.answer(try Self.element("<iq type='error' id='ka1'/>")) == .unsupported)
        #expect(feature.tick(ping, domain: "d", now: .zero, writeBlocked: false) == .whitespace)
        feature.forget()
        #expect(feature.due == nil)
        #expect(feature.tick(ping, domain: "d", now: .zero, writeBlocked: false) == .whitespace, "after a reconnect too")
    }

    // MARK: RoomMembership

    @Test(arguments: [
        ("<presence from='r@muc/me'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>", "joined"),
        ("<presence from='r@muc/me'/>", "joined"),  // a service without status 110: our own nick
        ("<presence from='r@muc/other'/>", "none"),
        (
            "<presence from='r@muc/me' type='error'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
            "retry"
        ),
        (
            "<presence from='r@muc/me' type='error'><error type='auth'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
            "muc-forbidden"
        ),
        (
            "<presence from='r@muc/me'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/><status code='201'/></x></presence>",
            "unlock"
        ),
        ("<iq type='result' id='muc-unlock'/>", "joined"),
        (
            "<iq type='error' id='muc-unlock'><error type='cancel'><not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "muc-configure-not-allowed"
        ),
    ])
    func roomJoinAnswers(xml: String, expected: String) throws {
        let room = RoomMembership(room: "r", service: "muc", nick: "me")
        let outcome: String
        switch room.joinAnswer(try Self.element(xml)) {
        case nil: outcome = "none"
        case .joined?: outcome = "joined"
        case .retryLater?: outcome = "retry"
        case .unlock(let iq)?: outcome = iq.attribute("id") == RoomMembership.unlockID ? "unlock" : "?"
        case .failed(let error)?: outcome = error.kind
        }
        #expect(outcome == expected)
    }

    @Test func aLockedRoomIsRetriedTenTimesThenRefused() throws {
        let room = RoomMembership(room: "r@elsewhere", service: "ignored", nick: "me")
        #expect(room.jid == "r@elsewhere")
        let locked = try Self.element(
            "<presence from='r@elsewhere/me' type='error'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>"
        )
        for _ in 0..<RoomMembership.maxJoinRetries { #expect(room.joinAnswer(locked) == .retryLater) }
        #expect(room.joinAnswer(locked) == .failed(.mucError(condition: "item-not-found")))
    }

    @Test func occupantsFollowTheRoomsPresences() throws {
        let room = RoomMembership(room: "r", service: "muc", nick: "me")
        room.observe(try Self.element("<presence from='r@muc/a'/>"))
        room.observe(try Self.element("<presence from='r@muc/b'/>"))
        room.observe(try Self.element("<presence from='r@muc/a' type='unavailable'/>"))
        room.observe(try Self.element("<presence from='x@muc/c'/>"))
        #expect(room.occupants == ["b"])
    }

    // MARK: The step features' answers

    /// What an arriving stanza does to each step feature's waiting step: a row per feature and answer.
    @Test(arguments: [
        ("roster", "<iq type='result' id='q1'/>", "completed"),
        ("roster", "<iq type='result' id='q2'/>", "none"),
        ("roster", "<iq type='get' id='q1'/>", "none"),
        (
            "roster", "<iq type='error' id='q1'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "failed stanza-item-not-found"
        ),
        ("query", "<iq type='result' id='q1'/>", "completed"),
        ("query", "<iq type='result' id='other'/>", "none"),
        (
            "mam",
            "<iq type='error' id='q1'><error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "unmeasured, counted mam_unsupported"
        ),
        (
            "mam", "<iq type='error' id='q1'><error type='auth'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "failed stanza-forbidden"
        ),
        ("mam", "<iq type='result' id='q1'/>", "completed"),
        ("presence", "<presence from='user1@load.test/r1'/>", "completed, online"),
        ("presence", "<presence from='user2@load.test/r1'/>", "none"),
        (
            "presence",
            "<presence from='user1@load.test/r1' type='error'><error type='modify'><bad-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
            "failed stanza-bad-request, offline"
        ),
    ])
    func stepFeatureAnswers(feature: String, xml: String, expected: String) throws {
        var harness = try FeatureHarness(profile: Self.featureProfile)
        let stanza = try Self.element(xml)
        var tools = harness.tools()
        let outcome: StepOutcome?
        switch feature {
        case "roster":
            var roster = RosterFeature()
            _ = roster.start(.get, timeout: .seconds(10), tools: &tools, &harness.shared)
            outcome = roster.answer(stanza, &harness.shared)
        case "query":
            var query = QueryFeature()
            _ = query.start(.ping(to: nil), timeout: .seconds(10), tools: &tools, &harness.shared)
            outcome = query.answer(stanza, &harness.shared)
        case "presence":
            var presence = PresenceFeature()
            #expect(
                presence.start(.available(show: nil, status: nil, priority: nil), timeout: .seconds(30), tools: &tools, &harness.shared)
                    == .waiting(timeout: PresenceFeature.echoWait), "the echo is waited for 2 s at most")
            harness.shared.actions.removeAll()
            outcome = presence.answer(stanza, boundJID: "user1@load.test/r1", &harness.shared)
        default:
            let archive = ArchiveFeature()
            var context = RequestContext(tools: tools, counters: harness.counters(of: "mam"), timeout: .seconds(10))
            _ = archive.start(FeatureStep(feature: "mam", operation: "query", settings: ["max": .number(5)]), &harness.shared, &context)
            harness.shared.actions.removeAll()
            outcome = archive.answer(stanza, &harness.shared, &context)
        }
        var said: String
        switch outcome {
        case nil: said = "none"
        case .completed(let measured)?: said = measured ? "completed" : "unmeasured"
        case .failed(let error)?: said = "failed \(error.kind)"
        case .waiting?: said = "waiting"
        }
        for action in harness.shared.actions {
            switch action {
            case .setOnline(let online): said += online ? ", online" : ", offline"
            case .record(.countRegistered(let id, _)): said += ", counted \(harness.counterName(id))"
            default: break
            }
        }
        #expect(said == expected)
    }

    static let featureProfile = """
        name: features
        steps: [login, {presence: available}, roster: get, ping, mam, logout]
        """

    @Test func thePresenceStepCompletesUnmeasuredWhenNoEchoComesAndCountsALateOne() throws {
        var harness = try FeatureHarness(profile: Self.featureProfile)
        var presence = PresenceFeature()
        var tools = harness.tools()
        _ = presence.start(.available(show: nil, status: nil, priority: nil), timeout: .seconds(30), tools: &tools, &harness.shared)
        #expect(presence.timedOut(&harness.shared) == .completed(measured: false))
        #expect(presence.isAvailable)
        presence.noteLateEcho(try Self.element("<presence from='user1@load.test/r1'/>"), boundJID: "user1@load.test/r1", &harness.shared)
        let counted = harness.shared.actions.compactMap { action -> Counter? in
            if case .record(.count(let counter, _)) = action { return counter }
            return nil
        }
        #expect(counted.contains(.presenceEchoMissing) && counted.contains(.presenceEchoLate))
    }

    // MARK: ProgramFeature: its own timers

    @Test func theProgramOwnsItsStepTimeoutAndThinkTimeAndKeepsThemAcrossAResumption() throws {
        var harness = try FeatureHarness(profile: Self.featureProfile)
        var program = ProgramFeature(start: .zero, generator: SeededGenerator(seed: 1))
        program.begin(harness.shared)
        guard case .step(.presence, _) = program.next(harness.shared) else {
            Issue.record("the first step after login is the presence")
            return
        }
        #expect(program.take(.waiting(timeout: .seconds(2)), owner: .presence, &harness.shared) == nil)
        #expect(program.deadline == SessionInstant.zero + .seconds(2) && program.wake == nil && program.waitingOn == .presence)
        // Resumed after the drop: a step still waiting gets its whole step timeout again.
        harness.shared.now = .zero + .seconds(5)
        let runsOn = program.resumed(harness.shared)
        #expect(!runsOn)
        #expect(program.deadline == SessionInstant.zero + .seconds(5) + harness.shared.script.instructions[program.program.pc].timeout)
        harness.shared.now = .zero + .seconds(400)
        #expect(program.timedOut(harness.shared) == .presence)
        #expect(program.deadline == nil)
        program.think(ThinkTime.constant(.seconds(3)))
        #expect(program.wake != nil && program.isResting(atLeast: .seconds(1), now: .zero))
        let dropped = program.stop()
        #expect(dropped, "a think time is dropped at the run's end")
        #expect(program.wake == nil)
        guard case .logout = program.next(harness.shared) else {
            Issue.record("a stopped program logs out")
            return
        }
    }

    // MARK: ConnectionFeature: endpoint fallback and backpressure decided in the session

    @Test(arguments: [
        (ConnectionFailure.refused, 1, "fallback to 2 (node n2), counted"),
        (.timeout, 1, "fallback to 2 (node n2), counted"),
        (.tls, 1, "no fallback"),
        (.refused, 0, "no fallback"),
    ])
    func aConnectLevelFailureFallsBackWhileTheOrderHasEndpoints(failure: ConnectionFailure, remaining: Int, expected: String) throws {
        var harness = try FeatureHarness(profile: Self.featureProfile, fallbacks: remaining)
        var connection = ConnectionFeature()
        connection.connect(resumeLocation: nil, &harness.shared)
        harness.shared.actions.removeAll()
        var said = "no fallback"
        if connection.fallBack(after: failure, &harness.shared) {
            guard case .connect(let target)? = harness.shared.actions.last else {
                Issue.record("no connect")
                return
            }
            said = "fallback to \(target.endpoint) (node \(connection.node(harness.shared)?.label ?? "-"))"
            if harness.shared.actions.contains(.record(.count(.endpointFallbacks))) { said += ", counted" }
            #expect(target.attempt == 1)
        }
        #expect(said == expected)
    }

    @Test func aSocketThatDoesNotDrainEndsTheSessionAfterTheStallTimeout() throws {
        var harness = try FeatureHarness(profile: Self.featureProfile)
        var connection = ConnectionFeature()
        connection.writability(false, harness.shared)
        #expect(connection.writeBlocked && connection.deadline == SessionInstant.zero + harness.shared.settings.writeStallTimeout)
        harness.shared.now = .zero + .seconds(1)
        let early = connection.stalled(harness.shared)
        #expect(!early)
        connection.writability(true, harness.shared)
        #expect(!connection.writeBlocked && connection.deadline == nil, "draining again disarms the stall")
        connection.writability(false, harness.shared)
        harness.shared.now = .zero + .seconds(60)
        let stalled = connection.stalled(harness.shared)
        #expect(stalled)
    }

    // MARK: ReconnectFeature

    @Test func onlyASessionThatLoggedInReconnectsAndOnlyUpToItsAttempts() throws {
        let policy = ReconnectPolicy(attempts: 2)
        var state = ReconnectFeature()
        let drop = SessionError.connection(.closed)
        #expect(!state.allows(after: drop, policy: policy, stopping: false), "never logged in")
        state.loggedIn()
        #expect(state.allows(after: drop, policy: policy, stopping: false))
        #expect(!state.allows(after: drop, policy: policy, stopping: true), "the run is stopping")
        #expect(!state.allows(after: .keepAliveTimeout, policy: ReconnectPolicy(attempts: 0), stopping: false), "no policy")
        #expect(state.nextAttempt() == 1 && state.nextAttempt() == 2)
        #expect(!state.allows(after: drop, policy: policy, stopping: false), "attempts used up")
        state.churned()
        #expect(state.nextAttempt() == 1, "a churn starts again")
        // The back-off is the feature's own wake-up, drawn from the run's seed.
        let harness = try FeatureHarness(profile: Self.featureProfile)
        state.backOff(attempt: 1, harness.shared)
        #expect(state.wake != nil)
        let wake = try #require(state.wake)
        let due = state.due(harness.shared)
        #expect(due == (wake <= harness.shared.now))
    }

    // MARK: StreamManagementFeature

    @Test(arguments: [
        ("<r xmlns='urn:xmpp:sm:3'/>", "handled, answered"),
        ("<a xmlns='urn:xmpp:sm:3' h='0'/>", "handled"),
        ("<a xmlns='urn:xmpp:sm:3'/>", "off sm-bad-ack"),
        (
            "<failed xmlns='urn:xmpp:sm:3'><unexpected-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>",
            "off sm-enable-unexpected-request"
        ),
        ("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true'/>", "handled"),
        ("<other xmlns='urn:xmpp:sm:3'/>", "unexpected"),
    ])
    func streamManagementElements(xml: String, expected: String) throws {
        var harness = try FeatureHarness(profile: Self.featureProfile)
        var said: String
        switch StreamManagementFeature().received(try Self.element(xml), &harness.shared) {
        case .handled: said = "handled"
        case .off(let kind): said = "off \(kind)"
        case .unexpected: said = "unexpected"
        }
        if case .send(let answer)? = harness.shared.actions.last, answer.name == "a" { said += ", answered" }
        #expect(said == expected)
    }

    @Test func streamManagementQueuesWhatAnEventSentAndAsksForAcks() throws {
        let feature = StreamManagementFeature()
        feature.state.enabled(StreamManagementState.Grant(resumptionID: "s1", location: nil, maxSeconds: nil))
        let message = try Self.element("<message to='a@b'><body>x</body></message>")
        var actions: [SessionAction] = [.send(message), .sendRaw(" "), .send(message)]
        feature.queue(&actions, from: 0, requestEvery: 2)
        #expect(actions.count == 4)
        #expect(actions.last == .send(StreamManagementState.request), "an ack request after every second stanza")
        #expect(feature.unacknowledgedCount == 2)
    }

    // MARK: ServerFactsProbe

    @Test func theProbeAsksOnceAndReadsItsAnswers() throws {
        let probe = ServerFactsProbe()
        #expect(probe.queries(domain: "d", now: .zero).count == 3)
        #expect(probe.queries(domain: "d", now: .zero).isEmpty, "not again after a reconnect")
        let version = try Self.element(
            "<iq type='result' id='xmppload-facts-version'><query xmlns='jabber:iq:version'><name>Prosody</name><version>0.12.3</version></query></iq>"
        )
        #expect(ServerFactsProbe.answer(version, domain: "d", now: .zero) == .facts(ServerFacts(softwareName: "Prosody", softwareVersion: "0.12.3")))
        let time = try Self.element(
            "<iq type='result' id='xmppload-time-1-5'><time xmlns='urn:xmpp:time'><utc>2026-11-27T10:00:00Z</utc></time></iq>")
        guard case .clockSample(let sent, let utc, let next)? = ServerFactsProbe.answer(time, domain: "d", now: .zero) else {
            Issue.record("no sample")
            return
        }
        #expect(
            sent == SessionInstant(nanoseconds: 5) && utc == "2026-11-27T10:00:00Z" && next?.attribute("id")?.hasPrefix("xmppload-time-2-") == true)
        #expect(ServerFactsProbe.answer(try Self.element("<iq type='result' id='q1'/>"), domain: "d", now: .zero) == nil)
    }
}
