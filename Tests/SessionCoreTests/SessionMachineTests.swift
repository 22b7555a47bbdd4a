import Foundation
import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// `SessionMachine` with plain values and virtual time: login, steps, think, wait patterns, MUC, timeouts,
/// graceful stop, and the per-profile variables of a mix.
@Suite struct SessionMachineTests {
    static func profile(_ steps: String, extra: String = "") -> String {
        """
        name: t
        login: {sasl: PLAIN, tls: none, resource: r1}
        \(extra)
        steps:
        \(steps)
        """
    }

    /// An HDR reading equals `expected` to the histogram's 3 significant digits.
    static func within(_ value: UInt64?, _ expected: UInt64) -> Bool {
        guard let value else { return false }
        return value >= expected && value - expected <= expected / 1000 + 1
    }

    @Test func startArmsTheLoginTimeoutAndAsksForAConnection() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - logout"))
        driver.send(.start)
        #expect(driver.actions == [.connectFirst])
        #expect(driver.timeoutAt == SessionInstant.zero + .seconds(30))
        #expect(driver.host.connecting == 1)
    }

    @Test func aWholeSessionRecordsLoginPhasesStepsAndLogout() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - roster: get\n  - presence: available\n  - logout"))
        driver.send(.start)
        driver.advance(by: .milliseconds(3))
        driver.send(.connected)
        #expect(driver.actions.last == .openStream)
        try driver.receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        #expect(driver.sent().map(\.name) == ["auth"])
        driver.advance(by: .milliseconds(5))
        try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        #expect(driver.actions.last == .restartStream)
        try driver.receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
        #expect(driver.sent().map(\.name) == ["iq"])
        driver.advance(by: .milliseconds(2))
        try driver.receive("<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
        // Logged in: the roster request goes out at once.
        let roster = driver.sent()
        #expect(roster.count == 1 && roster[0].attribute("id") == "q1")
        #expect(driver.host.onlineGauge == 1 && driver.host.connecting == 0)
        driver.advance(by: .milliseconds(4))
        try driver.receive("<iq type='result' id='q1'><query xmlns='jabber:iq:roster'/></iq>")
        #expect(driver.sent().map(\.name) == ["presence"])
        driver.advance(by: .milliseconds(1))
        try driver.receive("<presence from='user1@load.test/r1'/>")
        #expect(driver.host.online.isEmpty, "logged out: no longer a target")
        #expect(driver.actions.last == .closeStream)
        driver.advance(by: .milliseconds(1))
        driver.send(.streamClosed)
        #expect(driver.ended)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.errors.isEmpty)
        // Phases on the injected clock, exactly: connect 3 ms, SASL 5 ms, bind 2 ms; login 10 ms.
        #expect(Self.within(snapshot.latency["login.connect"]?.maxMicroseconds, 3000))
        #expect(Self.within(snapshot.latency["login.sasl"]?.maxMicroseconds, 5000))
        #expect(Self.within(snapshot.latency["login.bind"]?.maxMicroseconds, 2000))
        #expect(Self.within(snapshot.latency["login"]?.maxMicroseconds, 10_000))
        #expect(Self.within(snapshot.latency["roster.get"]?.maxMicroseconds, 4000))
        #expect(Self.within(snapshot.latency["logout"]?.maxMicroseconds, 1000))
        #expect(driver.host.released == [0])
    }

    @Test func handlingIntoARecycledBufferGivesTheSameActionsInTheCallersStorage() throws {
        let yaml = Self.profile("  - login\n  - roster: get\n  - presence: available\n  - logout")
        var plain = try MachineDriver(profile: yaml)
        var recycled = try MachineDriver(profile: yaml)
        var buffer: [SessionAction] = []
        buffer.reserveCapacity(16)
        let storage = buffer.withUnsafeBufferPointer { $0.baseAddress }
        recycled.recycledActions = buffer
        buffer = []  // the driver's copy is the storage's only reference
        func play(_ driver: inout MachineDriver) throws {
            driver.send(.start)
            driver.send(.connected)
            try driver.receive(
                "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
            try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
            try driver.receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
            try driver.receive(
                "<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
            try driver.receive("<iq type='result' id='q1'><query xmlns='jabber:iq:roster'/></iq>")
            try driver.receive("<presence from='user1@load.test/r1'/>")
            driver.send(.streamClosed)
        }
        try play(&plain)
        try play(&recycled)
        #expect(plain.ended && recycled.ended)
        #expect(recycled.actions == plain.actions)
        #expect(recycled.actions.count >= 8, "open, auth, restart, bind, roster, presence, close stream, close, ended")
        #expect(recycled.timeoutAt == plain.timeoutAt)
        let after = try #require(recycled.recycledActions)
        #expect(after.isEmpty)
        #expect(after.withUnsafeBufferPointer { $0.baseAddress } == storage, "no event needed more than the buffer held: never reallocated")
    }

    @Test func thinkWaitsOnTheInjectedClockAndTheNextStepIsDueAtTheThinkDeadline() throws {
        var driver = try MachineDriver(
            profile: Self.profile(
                """
                  - login
                  - think: {constant: 1s}
                  - message: {to: user2@load.test, body: hi}
                  - logout
                """))
        try driver.logIn()
        let loggedInAt = driver.now
        #expect(driver.wakeAt == loggedInAt + .seconds(1))
        #expect(driver.sent().allSatisfy { $0.name != "message" })
        driver.advance(by: .milliseconds(999))
        #expect(driver.sent().allSatisfy { $0.name != "message" }, "the think is still pending before 1 s")
        driver.advance(by: .seconds(1))
        let sent = driver.sent()
        #expect(sent.contains { $0.name == "message" }, "after the think the message went out")
        #expect(driver.actions.last == .closeStream, "then the session logs out")
        let stamp = try #require(sent.first { $0.name == "message" }.flatMap { MessageStamp(in: $0) })
        #expect(stamp.intendedNanos == (loggedInAt + .seconds(1)).stampNanoseconds, "due at the think deadline")
        #expect(stamp.sentNanos == stamp.intendedNanos)
    }

    @Test(arguments: [
        // (stanza, completes the wait)
        ("<message from='user3@load.test/r1' type='chat'><body>x</body></message>", false),
        ("<message from='user2@load.test/r1' type='normal'><body>x</body></message>", false),
        ("<presence from='user2@load.test/r1'/>", false),
        ("<message from='user2@load.test/r1' type='chat'><body>x</body></message>", true),
    ])
    func waitMatchesElementTypeAndSenderPattern(stanza: String, completes: Bool) throws {
        var driver = try MachineDriver(
            profile: Self.profile(
                """
                  - login
                  - wait: {for: message, type: chat, from: "user2@*", timeout: 5s}
                  - logout
                """))
        try driver.logIn()
        try driver.receive(stanza)
        #expect((driver.actions.last == .closeStream) == completes)
    }

    @Test(arguments: [ErrorPolicy.stop, .continue])
    func aStepTimeoutIsATypedErrorAndFollowsTheStepsPolicy(policy: ErrorPolicy) throws {
        var driver = try MachineDriver(
            profile: Self.profile(
                """
                  - login
                  - roster: get
                    timeout: 2s
                    on_error: \(policy.rawValue)
                  - logout
                """))
        try driver.logIn()
        driver.advance(by: .milliseconds(1999))
        #expect(!driver.ended && driver.actions.last != .closeStream)
        driver.advance(by: .milliseconds(1))
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors["timeout-roster.get"] == 1)
        if policy == .stop {
            #expect(driver.ended)
            #expect(snapshot.counter(.sessionsFailed) == 1)
        } else {
            #expect(!driver.ended)
            #expect(driver.actions.last == .closeStream, "went on to log out")
        }
    }

    @Test func aSilentServerTimesTheLoginOut() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - logout"))
        driver.send(.start)
        driver.send(.connected)
        driver.advance(by: .seconds(29))
        #expect(!driver.ended)
        driver.advance(by: .seconds(1))
        #expect(driver.ended)
        let failure = SessionFailure(error: .loginTimeout(phase: .features), loginPhase: .features)
        #expect(driver.actions.suffix(2) == [.close, .ended(failure: failure)])
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).errors == ["timeout-login": 1])
        // Ended: further events are ignored.
        driver.send(.connected)
        #expect(driver.actions.last == .ended(failure: failure))
    }

    @Test func mucJoinUnlocksACreatedRoomAndRetriesALockedOne() throws {
        var driver = try MachineDriver(
            profile: Self.profile(
                """
                  - login
                  - muc_join: {room: r1}
                  - muc_join: {room: r2}
                  - logout
                """))
        try driver.logIn()
        #expect(driver.sent().last?.attribute("to") == "r1@conference.load.test/user1")
        // We created r1 (110 + 201): accept the instant-room configuration.
        try driver.receive(
            "<presence from='r1@conference.load.test/user1'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/><status code='201'/></x></presence>"
        )
        #expect(driver.sent().last?.attribute("id") == "muc-unlock")
        try driver.receive("<iq type='result' id='muc-unlock' from='r1@conference.load.test'/>")
        // r2 is locked by its creator: item-not-found, retried after 500 ms.
        #expect(driver.sent().last?.attribute("to") == "r2@conference.load.test/user1")
        try driver.receive(
            "<presence type='error' from='r2@conference.load.test/user1'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>"
        )
        #expect(driver.sent().isEmpty)
        driver.advance(by: .milliseconds(500))
        #expect(driver.sent().last?.attribute("to") == "r2@conference.load.test/user1", "joined again")
        try driver.receive(
            "<presence from='r2@conference.load.test/user1'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>")
        #expect(driver.actions.last == .closeStream)
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).errors.isEmpty)
    }

    @Test func aGracefulStopDuringThinkLogsOutAtOnce() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - think: {constant: 60s}\n  - logout"))
        try driver.logIn()
        #expect(driver.wakeAt != nil)
        driver.send(.stop)
        #expect(driver.wakeAt == nil, "the think's wake-up is cancelled")
        #expect(driver.sent().last?.attribute("type") == "unavailable")
        #expect(driver.actions.last == .closeStream)
        // The server never closes: the logout counts as done after 5 s.
        driver.advance(by: .seconds(5))
        #expect(driver.actions.last == .ended(failure: nil))
    }

    @Test func whileTheSocketDoesNotDrainNoNewStepStartsAndTheDelayCountsInTheCorrectedLatency() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - think: {constant: 1s}\n  - roster: get\n  - logout"))
        try driver.logIn()
        _ = driver.sent()
        driver.send(.writability(false))
        driver.advance(by: .seconds(3))
        #expect(driver.sent().isEmpty, "the roster request waits for the socket to drain")
        // Answers to the server still go out (bounded by the engine's write-stall limits).
        try driver.receive("<iq type='get' id='p1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(driver.sent().map { $0.attribute("id") } == ["p1"])
        driver.send(.writability(true))
        let roster = driver.sent()
        #expect(roster.count == 1 && roster[0].attribute("id") == "q1")
        driver.advance(by: .milliseconds(10))
        try driver.receive("<iq type='result' id='q1'/>")
        // Due at the think's end (1 s after login), answered 2 s + 10 ms later: corrected ≈ 2.01 s.
        let latency = driver.host.recorder.takeSnapshot(start: 0, end: 1).latency["roster.get"]
        #expect(Self.within(latency?.maxMicroseconds, 2_010_000))
    }

    @Test func everythingAStepDidIsInTheMachinesReturn() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - presence: available\n  - roster: get\n  - stay_online"))
        try driver.logIn()
        _ = driver.sent()
        driver.advance(by: .milliseconds(4))
        // The echo of our presence: the return says the session is a target now, what it measured, and
        // that the roster request went out — no shared recorder or directory is touched.
        let echo = try SessionFeatureTests.element("<presence from='user1@load.test/r1'/>")
        let actions = driver.machine.handle(.received(echo), now: driver.now)
        #expect(actions.contains(.setOnline(true)))
        #expect(actions.contains(.record(.count(.stanzasInPresence))))
        let presenceMetric = driver.machine.script.instructions.first { $0.name == "presence" }?.metric
        #expect(
            actions.contains { action in
                if case .record(.latency(let metric, let corrected, _, _, _)) = action { return metric == presenceMetric && corrected == 4_000_000 }
                return false
            })
        #expect(actions.contains { if case .send(let iq) = $0 { return iq.attribute("id") == "q1" } else { return false } })
        #expect(actions.contains(.record(.count(.stepsCompleted))))
    }

    @Test func theProbingSessionReportsWhatTheServerSaysAboutItself() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online"))
        driver.machine.probesServer = true
        try driver.logIn()
        let queries = driver.sent().filter { $0.attribute("id")?.hasPrefix("xmppload-facts") == true }
        #expect(queries.map { $0.attribute("id") } == ["xmppload-facts-version", "xmppload-facts-disco"])
        try driver.receive(
            "<iq type='result' id='xmppload-facts-version' from='load.test'><query xmlns='jabber:iq:version'><name>Prosody</name><version>0.12.3</version><os>Linux</os></query></iq>"
        )
        try driver.receive(
            "<iq type='result' id='xmppload-facts-disco' from='load.test'><query xmlns='http://jabber.org/protocol/disco#info'><identity category='server' type='im' name='Prosody'/><feature var='urn:xmpp:ping'/><feature var='jabber:iq:version'/></query></iq>"
        )
        let facts = driver.host.facts
        #expect(facts.softwareName == "Prosody" && facts.softwareVersion == "0.12.3" && facts.operatingSystem == "Linux")
        #expect(facts.identities == [ServerFacts.Identity(category: "server", type: "im", name: "Prosody")])
        #expect(facts.features == ["jabber:iq:version", "urn:xmpp:ping"])
        #expect(facts.saslMechanism == "PLAIN")
        #expect(facts.streamFeatures?.contains(ServerFacts.StreamFeature(name: "bind", namespace: XMPPNamespace.bind)) == true)
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).counter(.stepsCompleted) == 0, "not the profile's steps")
    }

    @Test func serverPingsAreAnsweredWhileWaiting() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online"))
        try driver.logIn()
        _ = driver.sent()
        try driver.receive("<iq type='get' id='p7' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        let reply = driver.sent()
        #expect(reply.count == 1 && reply[0].attribute("type") == "result" && reply[0].attribute("id") == "p7")
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).counter(.pingsAnswered) == 1)
    }

    @Test func messagesToRandomGoOnlyToOnlineUsersAndCarryTheRunsStamp() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - message: {to: random, body: hi}\n  - logout"))
        driver.host.online = [4]
        try driver.logIn()
        let message = try #require(driver.sent().first { $0.name == "message" })
        #expect(message.attribute("to") == "user5@load.test")
        #expect(MessageStamp(in: message)?.runID == "run-1")
    }

    @Test func aConnectionLostWhileRunningIsATypedFailureAndLostDuringLogoutIsTheLogout() throws {
        var running = try MachineDriver(profile: Self.profile("  - login\n  - stay_online"))
        try running.logIn()
        running.send(.connectionLost(nil))
        #expect(running.host.recorder.takeSnapshot(start: 0, end: 1).errors == ["connection-closed": 1])

        var closing = try MachineDriver(profile: Self.profile("  - login\n  - logout"))
        try closing.logIn()
        closing.send(.connectionLost(nil))
        let snapshot = closing.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors.isEmpty && snapshot.counter(.sessionsCompleted) == 1)
    }

    /// Regression: in a weighted mix, each profile's sessions render *their* profile's variables
    /// (the run used to merge variables, first profile wins).
    @Test func eachProfileOfAMixKeepsItsOwnVariables() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mix-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, peer) in [("a", "alice"), ("b", "bob")] {
            try """
            name: \(name)
            login: {sasl: PLAIN, tls: none}
            variables: {peer: \(peer)}
            steps: [login, {message: {to: "${peer}@load.test", body: x}}, logout]
            """.write(to: directory.appendingPathComponent("\(name).yaml"), atomically: true, encoding: .utf8)
        }
        let mixPath = directory.appendingPathComponent("mix.yaml")
        try "name: mix\nmix:\n  - {profile: a.yaml, weight: 1}\n  - {profile: b.yaml, weight: 1}\n"
            .write(to: mixPath, atomically: true, encoding: .utf8)
        let definition = try ProfileLoader.load(path: mixPath.path)
        for (index, peer) in [(0, "alice"), (1, "bob")] {
            var driver = try MachineDriver(definition: definition, index: index)
            try driver.logIn()
            let message = try #require(driver.sent().first { $0.name == "message" })
            #expect(message.attribute("to") == "\(peer)@load.test")
        }
    }
}
