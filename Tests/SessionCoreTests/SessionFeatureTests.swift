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
        guard case .ping(let request) = feature.tick(ping, request: 1, domain: "d", now: .zero, writeBlocked: false) else {
            Issue.record("no ping")
            return
        }
        #expect(request.attribute("id") == "ka1")
        #expect(feature.tick(ping, request: 2, domain: "d", now: .zero, writeBlocked: false) == .connectionDead)
        #expect(feature.tick(ping, request: 3, domain: "d", now: .zero, writeBlocked: true) == .skipped, "blocked: nothing sent")
    }

    @Test(arguments: [
        ("<iq type='result' id='ka1'/>", KeepAliveFeature.Answer?.some(.roundTrip(since: .zero))),
        ("<iq type='error' id='ka1'/>", .some(.unsupported)),
        ("<iq type='result' id='other'/>", nil),
        ("<iq type='get' id='ka1'/>", nil),
    ])
    func keepAliveAnswers(xml: String, expected: KeepAliveFeature.Answer?) throws {
        var feature = KeepAliveFeature()
        _ = feature.tick(KeepAlive(kind: .ping, interval: .seconds(1)), request: 1, domain: "d", now: .zero, writeBlocked: false)
        #expect(feature.answer(try Self.element(xml)) == expected)
    }

    @Test func anErrorAnswerTurnsKeepAlivesIntoWhitespaceForGood() throws {
        var feature = KeepAliveFeature()
        let ping = KeepAlive(kind: .ping, interval: .seconds(1))
        _ = feature.tick(ping, request: 1, domain: "d", now: .zero, writeBlocked: false)
        #expect(feature.answer(try Self.element("<iq type='error' id='ka1'/>")) == .unsupported)
        #expect(feature.tick(ping, request: 2, domain: "d", now: .zero, writeBlocked: false) == .whitespace)
        feature.forgetPending()
        #expect(feature.tick(ping, request: 3, domain: "d", now: .zero, writeBlocked: false) == .whitespace, "after a reconnect too")
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

    // MARK: The Waiting table

    @Test(arguments: [
        (Waiting.iqResponse(id: "q1"), "<iq type='result' id='q1'/>", "completed"),
        (.iqResponse(id: "q1"), "<iq type='result' id='q2'/>", "none"),
        (
            .iqResponse(id: "q1"),
            "<iq type='error' id='q1'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "stanza-item-not-found"
        ),
        (
            .extensionResponse(id: "q1", feature: .archive),
            "<iq type='error' id='q1'><error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            "unsupported"
        ),
        (
            .extensionResponse(id: "q1", feature: .archive),
            "<iq type='error' id='q1'><error type='auth'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>", "stanza-forbidden"
        ),
        (.ownPresence, "<presence from='u@d/r'/>", "echoed"),
        (.ownPresence, "<presence from='v@d/r'/>", "none"),
        (
            .ownPresence,
            "<presence from='u@d/r' type='error'><error type='modify'><bad-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
            "refused stanza-bad-request"
        ),
        (.timer, "<iq type='result' id='q1'/>", "none"),
        (.stayOnline, "<presence from='u@d/r'/>", "none"),
    ])
    func waitingRows(waiting: Waiting, xml: String, expected: String) throws {
        let answer = waiting.answer(to: try Self.element(xml), boundJID: "u@d/r", room: nil) { _ in false }
        let outcome: String
        switch answer {
        case nil: outcome = "none"
        case .completed?: outcome = "completed"
        case .echoed?: outcome = "echoed"
        case .unsupported(let counter)?: outcome = counter == .archiveUnsupported ? "unsupported" : "?"
        case .refused(let error, _)?: outcome = error.kind
        case .presenceRefused(let error, _)?: outcome = "refused \(error.kind)"
        case .room?: outcome = "room"
        }
        #expect(outcome == expected)
    }

    @Test func onlyThePresenceRowWaitsLessAndCompletesOnItsTimeout() {
        #expect(Waiting.ownPresence.timeout(for: .seconds(30)) == Waiting.presenceEchoWait)
        #expect(Waiting.ownPresence.timeout(for: .seconds(1)) == .seconds(1))
        #expect(Waiting.iqResponse(id: "q").timeout(for: .seconds(30)) == .seconds(30))
        #expect(Waiting.ownPresence.timedOut(step: "presence") == .echoMissing)
        #expect(Waiting.mucJoin(room: "r").timedOut(step: "muc.join") == .failed(.stepTimeout(step: "muc.join")))
        #expect(Waiting.allAwaitingServer == [true, true, true, true, true, false, false, false])
    }

    // MARK: ReconnectState

    @Test func onlyASessionThatLoggedInReconnectsAndOnlyUpToItsAttempts() {
        let policy = ReconnectPolicy(attempts: 2)
        var state = ReconnectState()
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
    }

    // MARK: StreamManagementSession

    @Test(arguments: [
        ("<r xmlns='urn:xmpp:sm:3'/>", "answer"),
        ("<a xmlns='urn:xmpp:sm:3' h='0'/>", "handled"),
        ("<a xmlns='urn:xmpp:sm:3'/>", "bad-ack"),
        ("<failed xmlns='urn:xmpp:sm:3'><unexpected-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>", "refused unexpected-request"),
        ("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true'/>", "handled"),
        ("<other xmlns='urn:xmpp:sm:3'/>", "unexpected"),
    ])
    func streamManagementElements(xml: String, expected: String) throws {
        let outcome: String
        switch StreamManagementSession().received(try Self.element(xml)) {
        case .handled: outcome = "handled"
        case .answer(let a): outcome = a.name == "a" ? "answer" : "?"
        case .badAck: outcome = "bad-ack"
        case .refused(let condition): outcome = "refused \(condition)"
        case .unexpected: outcome = "unexpected"
        }
        #expect(outcome == expected)
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

extension Waiting {
    /// `awaitsServer` for every row, in declaration order.
    static var allAwaitingServer: [Bool] {
        [
            Waiting.iqResponse(id: ""), .extensionResponse(id: "", feature: .carbons), .ownPresence, .mucJoin(room: ""), .stanza, .nothing, .timer,
            .stayOnline,
        ]
        .map(\.awaitsServer)
    }
}
