import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// Servers that skip courtesies (docs/PROFILES.md, "When the server stays silent"): no presence echo,
/// error replies to keep-alive pings, a login stuck in one phase, registration that needs a fresh
/// stream (jabberd2) — none may turn a working session into a failed one, and each is said.
@Suite struct SilentServerTests {
    static func profile(_ steps: String, extra: String = "") -> String { SessionMachineTests.profile(steps, extra: extra) }

    static func snapshot(_ driver: MachineDriver) -> IntervalSnapshot {
        driver.host.recorder.takeSnapshot(start: 0, end: 1)
    }

    // MARK: - Presence

    @Test func withoutAnEchoThePresenceStepCompletesAfterTwoSecondsAndTheSessionIsThenATarget() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - presence: available\n  - stay_online"))
        try driver.logIn()
        #expect(driver.sent().last?.name == "presence")
        // Not yet a target: a message to the bare JID could overtake the presence inside the server.
        #expect(driver.host.online.isEmpty)
        driver.advance(by: .milliseconds(1999))
        #expect(Self.snapshot(driver).counter(.presenceEchoMissing) == 0)
        driver.advance(by: .milliseconds(1))
        #expect(driver.host.online == [0], "a message target once the wait for the echo is over")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counter(.presenceEchoMissing) == 1)
        #expect(snapshot.latency["presence"] == nil, "no echo, nothing to time")
        #expect(snapshot.errors.isEmpty && !driver.ended)
        // A late echo: a slow server, counted as such.
        try driver.receive("<presence from='user1@load.test/r1'/>")
        #expect(Self.snapshot(driver).counter(.presenceEchoLate) == 1)
        #expect(driver.host.online == [0])
    }

    @Test func theBoundedWaitIsTheStepsTimeoutWhenThatIsShorter() throws {
        var driver = try MachineDriver(
            profile: Self.profile("  - login\n  - presence: available\n    timeout: 500ms\n  - logout"))
        try driver.logIn()
        driver.advance(by: .milliseconds(500))
        #expect(driver.actions.last == .closeStream, "went on to log out")
        #expect(Self.snapshot(driver).counter(.presenceEchoMissing) == 1)
    }

    @Test func anEchoWithinTheWaitIsMeasuredAndCountsNothing() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - presence: available\n  - stay_online"))
        try driver.logIn()
        driver.advance(by: .milliseconds(30))
        #expect(driver.host.online.isEmpty)
        try driver.receive("<presence from='user1@load.test/r1'/>")
        #expect(driver.host.online == [0], "a message target at the echo")
        driver.advance(by: .seconds(10))
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.latency["presence"]?.count == 1)
        #expect(snapshot.counter(.presenceEchoMissing) == 0 && snapshot.counter(.presenceEchoLate) == 0)
    }

    @Test func aRefusedPresenceFailsTheStepAndIsNoTarget() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - presence: available\n  - stay_online"))
        try driver.logIn()
        try driver.receive(
            "<presence from='user1@load.test/r1' type='error'><error type='cancel'><not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>"
        )
        #expect(driver.ended)
        #expect(driver.host.online.isEmpty)
        #expect(Self.snapshot(driver).errors == ["stanza-not-allowed": 1])
    }

    // MARK: - MUC

    @Test func aRoomWithoutStatus110JoinsOnOurOwnNicksPresence() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - muc_join: {room: r1}\n  - logout"))
        try driver.logIn()
        #expect(driver.sent().last?.attribute("to") == "r1@conference.load.test/user1")
        // Another occupant: not us, the join goes on waiting.
        try driver.receive(
            "<presence from='r1@conference.load.test/user7'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' role='participant'/></x></presence>"
        )
        #expect(driver.actions.last != .closeStream)
        // Our nick, without status 110 (a service older than XEP-0045 1.20): joined.
        try driver.receive(
            "<presence from='r1@conference.load.test/user1'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' role='participant'/></x></presence>"
        )
        #expect(driver.actions.last == .closeStream)
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.errors.isEmpty && snapshot.latency["muc.join"]?.count == 1)
    }

    // MARK: - Pings

    @Test func aPingStepAnsweredWithAnErrorStillFailsWithTheCondition() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - ping\n  - logout", extra: "keepalive: {ping: 60s}"))
        try driver.logIn()
        let ping = try #require(driver.sent().last)
        try driver.receive(
            "<iq type='error' id='\(ping.attribute("id")!)' from='load.test'><error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        )
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.errors == ["stanza-feature-not-implemented": 1])
        #expect(snapshot.counter(.pingsUnsupported) == 0, "a step's ping is not a keep-alive")
        #expect(driver.ended)
    }

    @Test func aKeepAlivePingAnsweredWithAnErrorFallsBackToWhitespaceOnce() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online", extra: "keepalive: {ping: 10s}"))
        try driver.logIn()
        _ = driver.sent()
        driver.advance(by: .seconds(10))
        let ping = try #require(driver.sent().last)
        #expect(ping.firstChild(named: "ping", namespace: XMPPNamespace.ping) != nil)
        try driver.receive(
            "<iq type='error' id='\(ping.attribute("id")!)' from='load.test'><error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        )
        driver.actions.removeAll()
        driver.advance(by: .seconds(30))
        #expect(driver.actions == [.sendRaw(" "), .sendRaw(" "), .sendRaw(" ")])
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counter(.pingsUnsupported) == 1)
        #expect(snapshot.latency["keepalive.ping"] == nil)
        #expect(snapshot.errors.isEmpty && !driver.ended)
    }

    // MARK: - Stream management

    @Test func streamManagementAskedForButNotOfferedIsCountedAndTheSessionGoesOn() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online", extra: "stream_management: true"))
        // logIn's features offer no urn:xmpp:sm:3 (as jabberd2, whose only XEP-0198 is pre-standard).
        try driver.logIn()
        #expect(!driver.sent().contains { $0.name == "enable" })
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counter(.streamManagementNotOffered) == 1)
        #expect(snapshot.errors.isEmpty && !driver.ended)
    }

    @Test func aProfileWithoutStreamManagementCountsNothing() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online"))
        try driver.logIn()
        #expect(Self.snapshot(driver).counter(.streamManagementNotOffered) == 0)
    }

    // MARK: - Login phases

    @Test func aLoginStuckAtBindSaysSo() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - logout"))
        driver.send(.start)
        driver.send(.connected)
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try driver.receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
        driver.advance(by: .seconds(30))
        #expect(driver.ended)
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.errors == ["timeout-login": 1])
        #expect(snapshot.errorExamples?["timeout-login"] == "stuck at bind: no stream features after SASL, or no answer to the resource bind")
    }

    @Test func aLoginThatNeverConnectsIsStuckAtConnect() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - logout"))
        driver.send(.start)
        driver.advance(by: .seconds(30))
        #expect(Self.snapshot(driver).errorExamples?["timeout-login"] == "stuck at connect: the TCP connection was not established")
    }

    @Test func everyPhaseHasItsOwnWords() {
        let details = ([nil] + LoginPhase.allCases.map { Optional($0) }).compactMap { SessionError.loginTimeout(phase: $0).detail }
        #expect(Set(details).count == LoginPhase.allCases.count + 1)
        for phase in LoginPhase.allCases {
            #expect(SessionError.loginTimeout(phase: phase).detail?.hasPrefix("stuck at \(phase.rawValue): ") == true)
            #expect(SessionError.loginTimeout(phase: phase).kind == "timeout-login")
        }
    }

    @Test func loginFailuresOfThisKindCarryAHintNamingWhatToDo() throws {
        #expect(try #require(ErrorHint.hint(for: SessionError.loginTimeout(phase: .bind).kind)).contains("stuck in"))
        let forced = SessionError.login(.forcedMechanismNotOffered(.scramSHA256, offered: ["PLAIN"])).kind
        #expect(try #require(ErrorHint.hint(for: forced)).contains("--sasl"))
        let none = SessionError.login(.noCommonMechanism(offered: ["DIGEST-MD5"])).kind
        #expect(try #require(ErrorHint.hint(for: none)).contains("DIGEST-MD5"))
        let form = SessionError.login(.registrationFailed(condition: "not-acceptable")).kind
        #expect(try #require(ErrorHint.hint(for: form)).contains("more than username and password"))
    }

    // MARK: - Registration

    @Test func registrationLogsInOnAFreshStream() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login: {register: true}\n  - logout"))
        driver.send(.start)
        driver.send(.connected)
        try driver.receive(
            "<stream:features><register xmlns='http://jabber.org/features/iq-register'/><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
        )
        let register = try #require(driver.sent().last)
        #expect(register.firstChild(named: "query", namespace: "jabber:iq:register") != nil)
        driver.actions.removeAll()
        try driver.receive("<iq type='result' id='\(register.attribute("id")!)'/>")
        // jabberd2 answers no bind on this stream: close it, connect again.
        #expect(driver.actions == [.closeStream, .close, .connectFirst])
        #expect(Self.snapshot(driver).counter(.accountsCreated) == 1)
        driver.actions.removeAll()
        // The fresh stream authenticates and binds, without registering again.
        try driver.logIn(startedAlready: true)
        #expect(driver.actions.contains(.openStream))
        #expect(!driver.sent().contains { $0.firstChild(named: "query", namespace: "jabber:iq:register") != nil })
        #expect(driver.actions.last == .closeStream, "logged in, then the logout")
        driver.send(.streamClosed)
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counter(.sessionsLoggedIn) == 1 && snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.errors.isEmpty)
        #expect(snapshot.latency["login.register"]?.count == 1 && snapshot.latency["login"]?.count == 1)
    }
}
