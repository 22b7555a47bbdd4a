import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// XEP-0198 in the session machine: enabled after login when asked and offered, acks both ways, and
/// after a drop the stream resumed with the program where it was — or, when the server refuses, a
/// fresh bind with the program from the top.
@Suite struct StreamManagementTests {
    static let profile = """
        name: sm
        login: {sasl: PLAIN, tls: none, resource: r1}
        stream_management: {resume: true, request_every: 2}
        steps:
          - login
          - presence: available
          - message: {to: "user2@load.test", body: "hi"}
          - message: {to: "user2@load.test", body: "hi"}
          - message: {to: "user2@load.test", body: "hi"}
          - think: 10s
          - message: {to: "user2@load.test", body: "after"}
          - stay_online
        """

    static let smFeatures =
        "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>"

    /// Logs in with stream management offered, through the resumption grant and the initial presence.
    static func online(profile: String = profile) throws -> MachineDriver {
        var driver = try MachineDriver(profile: profile)
        driver.send(.start)
        driver.send(.connected)
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try driver.receive(smFeatures)
        try driver.receive("<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
        return driver
    }

    static func names(_ elements: [XMLElement]) -> [String] { elements.map(\.name) }

    @Test func enabledAfterLoginThenAcksRequestedEveryNStanzasAndAnswered() throws {
        var driver = try Self.online()
        #expect(Self.names(driver.sent()) == ["auth", "iq", "enable", "presence"], "enable right after bind")
        try driver.receive("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true'/>")
        try driver.receive("<presence from='user1@load.test/r1'/>")
        // Presence (1), then three messages: an <r/> after every 2nd stanza.
        #expect(Self.names(driver.sent()) == ["message", "r", "message", "message", "r"])
        try driver.receive("<r xmlns='urn:xmpp:sm:3'/>")
        #expect(driver.sent().map { $0.attribute("h") } == ["1"], "one stanza handled since <enabled/>: our own presence")
        try driver.receive("<a xmlns='urn:xmpp:sm:3' h='4'/>")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors.isEmpty)
    }

    @Test func withoutTheServersOfferNothingIsEnabled() throws {
        var driver = try MachineDriver(profile: Self.profile)
        try driver.logIn()
        #expect(!Self.names(driver.sent()).contains("enable"))
        try driver.receive("<r xmlns='urn:xmpp:sm:3'/>")
        #expect(driver.sent().isEmpty, "no answer without stream management")
    }

    @Test func aDropResumesTheStreamResendsTheUnacknowledgedAndGoesOnWhereItWas() throws {
        var driver = try Self.online()
        try driver.receive("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true' location='127.0.0.9:5222'/>")
        try driver.receive("<presence from='user1@load.test/r1'/>")
        try driver.receive("<a xmlns='urn:xmpp:sm:3' h='2'/>")
        _ = driver.sent()
        // Thinking after three messages; the server acknowledged presence + 1 message.
        driver.send(.connectionLost(.reset))
        #expect(driver.actions.last == .close)
        #expect(driver.host.online.isEmpty)
        driver.actions.removeAll()
        driver.advance(by: .seconds(2))
        #expect(
            driver.actions == [.connect(ConnectTarget(endpoint: 0, resumeLocation: "127.0.0.9:5222"))],
            "the server's location is where the resume goes")
        driver.send(.connected)
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try driver.receive(Self.smFeatures)
        let resume = driver.sent().last
        #expect(resume?.name == "resume" && resume?.attribute("previd") == "s1" && resume?.attribute("h") == "1")
        try driver.receive("<resumed xmlns='urn:xmpp:sm:3' previd='s1' h='3'/>")
        #expect(driver.sent().map { $0.name } == ["message"], "the one message the server never handled goes again; no bind")
        #expect(driver.host.online == [0], "a target again")
        // The think time goes on where it was: the next message is due 10 s after the last one.
        driver.advance(by: .seconds(10))
        #expect(driver.sent().compactMap { $0.firstChild(named: "body")?.text } == ["after"])
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.counter(.sessionsResumed) == 1 && snapshot.counter(.sessionsReconnects) == 1)
        #expect(snapshot.counter(.sessionsReconnected) == 0 && snapshot.counter(.sessionsResumeFailed) == 0)
        #expect(snapshot.latency["login.resume"]?.count == 1 && snapshot.latency["reconnect.login"]?.count == 1)
        #expect(snapshot.counter(.messagesSent) == 4, "a resent message is not a new message")
        #expect(snapshot.errors == ["connection-reset": 1])
    }

    @Test func aRefusedResumeBindsAFreshSessionAndCountsWhatWasNeverAcknowledged() throws {
        var driver = try Self.online()
        try driver.receive("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true'/>")
        try driver.receive("<presence from='user1@load.test/r1'/>")
        _ = driver.sent()
        driver.send(.streamClosed)
        driver.advance(by: .seconds(2))
        driver.send(.connected)
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try driver.receive(Self.smFeatures)
        try driver.receive(
            "<failed xmlns='urn:xmpp:sm:3' h='1'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
        #expect(Self.names(driver.sent()) == ["auth", "resume", "iq"], "a fresh bind at once")
        try driver.receive("<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
        #expect(Self.names(driver.sent()) == ["enable", "presence"], "enabled again, the program from the top")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.counter(.sessionsResumeFailed) == 1 && snapshot.counter(.sessionsReconnected) == 1)
        #expect(snapshot.counter(.streamManagementUnacknowledged) == 4, "presence + 3 messages never acknowledged")
    }

    @Test func resumptionAttemptsAreBoundedThenTheSessionEnds() throws {
        var driver = try Self.online()
        try driver.receive("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true'/>")
        driver.send(.connectionLost(.reset))
        for _ in 1...3 {
            driver.advance(by: .seconds(5))
            #expect(driver.actions.last == .connectFirst)
            driver.send(.connectFailed(.refused))
        }
        #expect(driver.ended, "no reconnect policy: three resume attempts, then the session is over")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.counter(.sessionsFailed) == 1 && snapshot.counter(.sessionsReconnects) == 3)
    }

    @Test func withoutResumptionADropIsADrop() throws {
        var driver = try Self.online(profile: Self.profile.replacingOccurrences(of: "resume: true", with: "resume: false"))
        #expect(driver.sent().first(where: { $0.name == "enable" })?.attribute("resume") == nil)
        try driver.receive("<enabled xmlns='urn:xmpp:sm:3'/>")
        driver.send(.connectionLost(.reset))
        #expect(driver.ended)
    }

    @Test func aRefusedEnableIsCountedAndTheSessionGoesOn() throws {
        var driver = try Self.online()
        try driver.receive("<failed xmlns='urn:xmpp:sm:3'><unexpected-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
        try driver.receive("<presence from='user1@load.test/r1'/>")
        #expect(!Self.names(driver.sent()).contains("r"), "no acks asked for once refused")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == ["sm-enable-unexpected-request": 1])
        #expect(!driver.ended)
    }

    @Test(arguments: ["stream_management: true", "stream_management: {request_every: 1}", "stream_management: {resume: false}"])
    func theProfileKeyDecodes(line: String) throws {
        let yaml = "name: x\n\(line)\nsteps: [login, logout]\n"
        let profile = try #require(try ProfileLoader.load(yaml: yaml, file: "t.yaml").profiles.first?.profile)
        #expect(profile.streamManagement != nil)
    }

    @Test func aBadProfileKeyIsAProblemWithItsPlace() {
        #expect(throws: (any Error).self) {
            try ProfileLoader.load(yaml: "name: x\nstream_management: {request_every: 0, acks: 3}\nsteps: [login, logout]\n", file: "t.yaml")
        }
    }
}
