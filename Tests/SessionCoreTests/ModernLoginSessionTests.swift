import LoadProfile
import LoadResults
import Testing

@testable import SessionCore
@testable import XMPPCore

/// The modern login in a whole session, on virtual time: SASL2 with Bind2 enabling stream
/// management and carbons inline (no `<enable/>`, no carbons iq), a FAST token asked for at the
/// first login and used by the next connection — a resumption through SASL2 after a drop, a fresh
/// FAST login after a churn —, rotated as the server says, a refused token dropped and counted, and
/// each login recorded under its path with its round trips.
@Suite struct ModernLoginSessionTests {
    static let profile = """
        name: modern
        login: {tls: none, resource: r1}
        stream_management: {resume: true, request_every: 5}
        steps:
          - login
          - carbons: enable
          - stay_online
        """

    /// SASL2 offering PLAIN with Bind2 (sm, carbons), inline sm and FAST HT-SHA-256-NONE.
    static let features =
        "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms>"
        + "<authentication xmlns='urn:xmpp:sasl:2'><mechanism>PLAIN</mechanism><inline>"
        + "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:sm:3'/><feature var='urn:xmpp:carbons:2'/></inline></bind>"
        + "<sm xmlns='urn:xmpp:sm:3'/><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast>"
        + "</inline></authentication></stream:features>"

    static let featuresAfter = "<stream:features><sm xmlns='urn:xmpp:sm:3'/></stream:features>"

    static func token(_ secret: String) -> String {
        "<token xmlns='urn:xmpp:fast:0' token='\(secret)' expiry='2030-01-01T00:00:00Z'/>"
    }

    /// The server's proof of a FAST login with `secret` (HT-SHA-256-NONE: no channel binding).
    static func proof(_ secret: String) -> String {
        Base64.encode(CryptoPrimitives.hmac(.sha256, key: Array(secret.utf8), data: Array("Responder".utf8)))
    }

    static func child(_ element: XMLElement, _ name: String, _ namespace: String) -> XMLElement? {
        element.firstChild(named: name, namespace: namespace)
    }

    /// Logs in with SASL2 + Bind2 (sm granted with resumption, carbons on) and a token issued.
    static func online(profile: String = profile, churnResumeShare: Double = 1) throws -> MachineDriver {
        var driver = try MachineDriver(profile: profile, churnResumeShare: churnResumeShare)
        driver.send(.start)
        driver.send(.connected)
        try driver.receive(features)
        try driver.receive(
            "<success xmlns='urn:xmpp:sasl:2'><bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm1' resume='true'/></bound>"
                + token("tok-1") + "<authorization-identifier>user1@load.test/xmppload.a1</authorization-identifier></success>")
        try driver.receive(featuresAfter)
        return driver
    }

    @Test func bind2EnablesStreamManagementAndCarbonsInlineAndAsksForAToken() throws {
        var driver = try MachineDriver(profile: Self.profile)
        driver.send(.start)
        driver.send(.connected)
        #expect(driver.machine.streamHeaderFrom == nil, "auto mode names the user only on a TLS-protected stream")
        try driver.receive(Self.features)
        let authenticate = try #require(driver.sent().first)
        #expect(authenticate.name == "authenticate" && authenticate.attribute("mechanism") == "PLAIN")
        let agent = try #require(Self.child(authenticate, "user-agent", AuthenticationOffer.sasl2Namespace))
        #expect(agent.attribute("id") == UserAgentIDTests.expected(seed: 0, serial: 0))
        let bind = try #require(Self.child(authenticate, "bind", AuthenticationOffer.bind2Namespace))
        #expect(Self.child(bind, "enable", XMPPNamespace.streamManagement)?.attribute("resume") == "true")
        #expect(Self.child(bind, "enable", AuthenticationOffer.carbonsNamespace) != nil, "the profile enables carbons")
        #expect(Self.child(authenticate, "request-token", AuthenticationOffer.fastNamespace)?.attribute("mechanism") == "HT-SHA-256-NONE")

        try driver.receive(
            "<success xmlns='urn:xmpp:sasl:2'><bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm1' resume='true'/></bound>"
                + Self.token("tok-1") + "<authorization-identifier>user1@load.test/xmppload.a1</authorization-identifier></success>")
        try driver.receive(Self.featuresAfter)
        #expect(driver.machine.boundJID == "user1@load.test/xmppload.a1")
        #expect(driver.machine.isRunning)
        #expect(driver.sent().isEmpty, "no <enable/>, no carbons iq: Bind2 did both")
        // Stream management runs: the server's <r/> is answered.
        try driver.receive("<r xmlns='urn:xmpp:sm:3'/>")
        #expect(driver.sent().map(\.name) == ["a"])

        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["login.path.sasl2-bind2"]?.count == 1)
        #expect(snapshot.counters["login_path_sasl2_bind2_round_trips"] == 2, "stream header, authenticate")
        #expect(snapshot.counters["login_path_sasl2_bind2_round_trips_2"] == 1)
        #expect(snapshot.counters["login_path_sasl2_bind2_reconnects"] == nil)
        #expect(snapshot.counters["fast_tokens_issued"] == 1)
        #expect(snapshot.counters["carbons_inline"] == 1)
        #expect(snapshot.latency["carbons"] == nil, "the step sent nothing and is not timed")
        #expect(snapshot.errors.isEmpty)
        let paths = try #require(LoginPathSummary.paths(in: snapshot))
        #expect(paths.keys.sorted() == ["sasl2-bind2"])
        #expect(paths["sasl2-bind2"]?.roundTrips == LoginPathSummary.RoundTrips(mean: 2, distribution: ["2": 1]))
    }

    @Test func aDropResumesThroughSASL2WithTheTokenWhichTheServerRotates() throws {
        var driver = try Self.online()
        _ = driver.sent()
        driver.send(.connectionLost(.reset))
        driver.actions.removeAll()
        driver.advance(by: .seconds(5))
        #expect(driver.actions.first == .connectFirst)
        driver.send(.connected)
        try driver.receive(Self.features)
        let authenticate = try #require(driver.sent().first)
        #expect(authenticate.attribute("mechanism") == "HT-SHA-256-NONE")
        #expect(Self.child(authenticate, "fast", AuthenticationOffer.fastNamespace) != nil)
        #expect(Self.child(authenticate, "resume", XMPPNamespace.streamManagement)?.attribute("previd") == "sm1")
        let response = try #require(Self.child(authenticate, "initial-response", AuthenticationOffer.sasl2Namespace))
        let expected = HashedTokenClient(mechanism: .htSHA256None, username: "user1", token: "tok-1", channelBinding: .none)!
        #expect(response.text == Base64.encode(expected.initialResponse()))

        try driver.receive(
            "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(Self.proof("tok-1"))</additional-data>"
                + "<resumed xmlns='urn:xmpp:sm:3' previd='sm1' h='0'/>" + Self.token("tok-2")
                + "<authorization-identifier>user1@load.test/xmppload.a1</authorization-identifier></success>")
        #expect(driver.machine.isRunning)
        #expect(driver.machine.boundJID == "user1@load.test/xmppload.a1", "a resumed stream keeps its JID")

        // The next drop: the rotated token.
        driver.send(.connectionLost(.reset))
        driver.advance(by: .seconds(5))
        driver.send(.connected)
        try driver.receive(Self.features)
        let next = try #require(driver.sent().first)
        let rotated = HashedTokenClient(mechanism: .htSHA256None, username: "user1", token: "tok-2", channelBinding: .none)!
        #expect(Self.child(next, "initial-response", AuthenticationOffer.sasl2Namespace)?.text == Base64.encode(rotated.initialResponse()))

        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["login.path.resumed"]?.count == 1)
        #expect(snapshot.counters["login_path_resumed_reconnects"] == 1)
        #expect(snapshot.counters["login_path_resumed_round_trips_2"] == 1)
        #expect(snapshot.counters["fast_tokens_issued"] == 2)
        #expect(snapshot.counters[Counter.sessionsResumed.name] == 1)
    }

    /// Without stream management a churned session logs in afresh — with its token, one message.
    @Test func aChurnedSessionLogsInWithFASTAndARefusedTokenFallsBackCounted() throws {
        let profile = Self.profile.replacingOccurrences(of: "stream_management: {resume: true, request_every: 5}\n", with: "")
        var driver = try Self.online(profile: profile)
        _ = driver.sent()
        driver.send(.churn)
        driver.advance(by: .seconds(5))
        driver.send(.connected)
        try driver.receive(Self.features)
        let authenticate = try #require(driver.sent().first)
        #expect(authenticate.attribute("mechanism") == "HT-SHA-256-NONE")
        #expect(Self.child(authenticate, "resume", XMPPNamespace.streamManagement) == nil)
        #expect(Self.child(authenticate, "bind", AuthenticationOffer.bind2Namespace) != nil)
        try driver.receive(
            "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(Self.proof("tok-1"))</additional-data><bound xmlns='urn:xmpp:bind:0'/>"
                + "<authorization-identifier>user1@load.test/xmppload.a2</authorization-identifier></success>")
        try driver.receive(Self.featuresAfter)
        #expect(driver.machine.boundJID == "user1@load.test/xmppload.a2")

        // Churned again: the server refuses the token; the same stream goes on with the password.
        driver.send(.churn)
        driver.advance(by: .seconds(5))
        driver.send(.connected)
        try driver.receive(Self.features)
        #expect(driver.sent().first?.attribute("mechanism") == "HT-SHA-256-NONE")
        try driver.receive(
            "<failure xmlns='urn:xmpp:sasl:2'><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/><text>token expired</text></failure>")
        let fallback = try #require(driver.sent().first)
        #expect(fallback.attribute("mechanism") == "PLAIN")
        #expect(Self.child(fallback, "request-token", AuthenticationOffer.fastNamespace) != nil, "a new token is asked for")
        try driver.receive(
            "<success xmlns='urn:xmpp:sasl:2'><bound xmlns='urn:xmpp:bind:0'/>" + Self.token("tok-3")
                + "<authorization-identifier>user1@load.test/xmppload.a3</authorization-identifier></success>")
        try driver.receive(Self.featuresAfter)
        #expect(driver.machine.isRunning)

        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["login.path.fast"]?.count == 1)
        #expect(snapshot.counters["login_path_fast_reconnects"] == 1)
        #expect(snapshot.latency["login.path.sasl2-bind2"]?.count == 2, "the first login and the fallback")
        #expect(snapshot.counters["login_path_sasl2_bind2_round_trips_3"] == 1, "the refused token's exchange counts")
        #expect(snapshot.counters["fast_token_fallbacks"] == 1)
        #expect(snapshot.counterNotices?["fast_token_fallbacks"]?.kind == "fast-token-rejected")
        #expect(snapshot.counters["fast_tokens_issued"] == 2)
        #expect(snapshot.errors.isEmpty)
    }

    /// `churn: {resume: P%}`: a churned session with a resumable stream resumes it (a network drop),
    /// or — drawn out of the share — comes back without it, as a restarted app, with its token.
    @Test(arguments: [(1.0, true), (0.0, false)])
    func aChurnResumesOrLogsInAfreshByTheRunsShare(share: Double, resumes: Bool) throws {
        var driver = try Self.online(churnResumeShare: share)
        _ = driver.sent()
        driver.send(.churn)
        driver.advance(by: .seconds(5))
        driver.send(.connected)
        try driver.receive(Self.features)
        let authenticate = try #require(driver.sent().first)
        #expect(authenticate.attribute("mechanism") == "HT-SHA-256-NONE", "the token either way")
        #expect((Self.child(authenticate, "resume", XMPPNamespace.streamManagement) != nil) == resumes)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.counters[Counter.sessionsChurned.name] == 1)
    }

    @Test func classicModeIgnoresSASL2AndNamesNoUser() throws {
        var driver = try MachineDriver(profile: Self.profile.replacingOccurrences(of: "login: {tls: none", with: "login: {mode: classic, tls: none"))
        driver.send(.start)
        driver.send(.connected)
        #expect(driver.machine.streamHeaderFrom == nil)
        try driver.receive(Self.features)
        #expect(driver.sent().map(\.name) == ["auth"])
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try driver.receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>")
        try driver.receive("<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
        #expect(driver.sent().map(\.name) == ["iq", "enable", "iq"], "bind, the classic <enable/>, the carbons iq")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["login.path.classic"]?.count == 1)
        #expect(snapshot.counters["login_path_classic_round_trips_4"] == 1, "header, auth, header after success, bind")
    }

    @Test func sasl2ModeNamesTheUserInTheHeaderFromTheStart() throws {
        var driver = try MachineDriver(profile: Self.profile.replacingOccurrences(of: "login: {tls: none", with: "login: {mode: sasl2, tls: none"))
        driver.send(.start)
        driver.send(.connected)
        #expect(driver.machine.streamHeaderFrom == "user1@load.test")
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        #expect(driver.ended)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors["sasl2-not-offered"] == 1, "\(snapshot.errors)")
    }
}

/// The user-agent id: a UUID shape, the same for a session's every connection and for the same
/// seed, different between sessions.
@Suite struct UserAgentIDTests {
    static func expected(seed: UInt64, serial: Int) -> String { UserAgentID.derive(seed: seed, serial: serial) }

    @Test(arguments: [(UInt64(0), 0), (1, 0), (1, 1), (42, 123_456)])
    func aVersion4UUIDPerSession(seed: UInt64, serial: Int) {
        let id = Self.expected(seed: seed, serial: serial)
        let parts = id.split(separator: "-").map(\.count)
        #expect(parts == [8, 4, 4, 4, 12], "\(id)")
        #expect(id.allSatisfy { $0.isHexDigit && !$0.isUppercase || $0 == "-" })
        #expect(Array(id)[14] == "4", "version 4")
        #expect("89ab".contains(Array(id)[19]), "RFC 4122 variant")
        #expect(id == Self.expected(seed: seed, serial: serial), "derived, so every connection of the session sends the same")
        #expect(id != Self.expected(seed: seed, serial: serial + 1))
        #expect(id != Self.expected(seed: seed &+ 1, serial: serial))
    }
}
