import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// End to end against a real Prosody on loopback (scripts/local-server), one private server per test.
/// Every load here is bounded in sessions and time and stops by itself.
@Suite(.serialized) struct EngineIntegrationTests {
    static let chatProfile = """
        name: integration-chat
        login: {resource: it}
        steps:
          - login
          - roster: get
          - presence: available
          - think: 3s
          - message: {to: random, body_size: 80, count: 3, interval: {uniform: [500ms, 1500ms]}}
          - stay_online
          - logout
        """

    static func configuration(
        _ server: LocalServer, accounts: ClosedRange<Int>, out: String,
        password: String? = nil, port: Int? = nil
    ) -> RunConfiguration {
        RunConfiguration(
            host: server.host, port: port ?? server.port, domain: server.domain, accounts: accounts,
            password: password ?? server.password, tls: .startTLS, insecure: true, mechanism: .scramSHA1,
            outputDirectory: out, interval: .seconds(2))
    }

    static func temporaryDirectory(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-it-\(name)-\(UUID().uuidString.prefix(6))").path
    }

    @Test(.timeLimit(.minutes(3)))
    func thousandSessionsLogInWithSCRAMOverSTARTTLSAndExchangeMessages() async throws {
        try await LocalServer.with(accounts: 1000) { server in
            let out = Self.temporaryDirectory("chat")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let definition = try ProfileLoader.load(yaml: Self.chatProfile, file: "integration-chat.yaml")
            let plan = LoadPlan.closed(sessions: 1000, ramp: .seconds(10), duration: .seconds(25))
            let run = LoadRun(configuration: Self.configuration(server, accounts: 1...1000, out: out), definition: definition, plan: plan)
            let summary = try await run.run().summary

            // What the run guarantees whatever the machine's speed: every planned arrival is either
            // started or counted as dropped; every started session ends logged out or failed; the ledger
            // accounts for every message; every login that succeeded timed each of its phases once.
            let sessions = summary.sessions
            #expect(
                sessions.started + summary.generator.droppedArrivals == 1000,
                "stop \(summary.stopReason), lag \(summary.generator.maxLoopLagMilliseconds) ms")
            #expect(sessions.completed + sessions.failed == sessions.started)
            #expect(sessions.loggedIn <= sessions.started && sessions.peakConcurrent <= 1000)
            #expect(summary.messages.received + summary.messages.lost == summary.messages.sent)
            #expect(summary.messages.duplicated == 0)
            #expect(summary.messages.sent <= 3 * sessions.loggedIn)
            // Errors, if any, are the kinds a loaded machine produces, never protocol or XML failures.
            // (message-service-unavailable: a random target went offline between the pick and the delivery;
            // connect-timeout and connection-reset: a starved server's accept backlog overflowed.)
            let loadKinds = [
                "timeout-", "dropped-", "stopped-at-deadline", "message-no-online-target", "message-service-unavailable",
                "connect-timeout", "connection-reset",
            ]
            #expect(summary.errors.keys.allSatisfy { kind in loadKinds.contains { kind.hasPrefix($0) } }, "errors: \(summary.errors)")
            // Sanity floor, not a speed claim: 1,000 logins over 10 s is well inside what the local
            // Prosody sustains (about 130 logins/s on one core), so most must succeed and chat.
            #expect(sessions.loggedIn * 10 >= sessions.started * 9, "logged in \(sessions.loggedIn) of \(sessions.started): \(summary.errors)")
            #expect(summary.messages.received * 10 >= summary.messages.sent * 9, "received \(summary.messages.received) of \(summary.messages.sent)")
            // Every login went through STARTTLS and SCRAM, and every phase was timed.
            for name in ["login", "login.connect", "login.tls", "login.features", "login.sasl", "login.bind"] {
                let latency = try #require(summary.latencyMilliseconds[name], "no \(name) latency")
                #expect(latency.count == sessions.loggedIn, "\(name): \(latency.count)")
                #expect(latency.p50 > 0 && latency.p50 <= latency.p99 && latency.p99 <= latency.max, "\(name): \(latency)")
            }
            let message = try #require(summary.latencyMilliseconds["message"])
            #expect(message.count == summary.messages.received)
            #expect(summary.bytes.sent > sessions.loggedIn * 1000 && summary.bytes.received > sessions.loggedIn * 2000)
            #expect(summary.generator.cpuSeconds > 0 && summary.generator.peakRSSBytes > 0)

            // The results directory holds what `report` needs.
            let directory = ResultsDirectory(path: out)
            let written = try directory.readSummary()
            #expect(written.runID == summary.runID && written.sessions == summary.sessions && written.messages == summary.messages)
            #expect(written.latencyMilliseconds == summary.latencyMilliseconds)
            // Intervals tile the run without gaps up to its 25 s (a loop that lags past a boundary
            // makes one longer interval, so their number depends on the machine; their span does not).
            let intervals = try directory.readIntervals()
            #expect(!intervals.isEmpty && intervals.first!.start < 2.5)
            #expect(zip(intervals, intervals.dropFirst()).allSatisfy { abs($0.end - $1.start) < 0.001 })
            #expect((intervals.last?.end ?? 0) >= 25)
            var total = IntervalSnapshot()
            for interval in intervals { total.accumulate(interval) }
            #expect(total.counter(.sessionsLoggedIn) == sessions.loggedIn)
            #expect(total.latency["login"]?.count == sessions.loggedIn)
            #expect(try directory.readManifest().stopReason == "duration")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aWrongPasswordFailsEachSessionWithATypedErrorAndTheRunGoesOn() async throws {
        try await LocalServer.with(accounts: 20) { server in
            let out = Self.temporaryDirectory("badpw")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let definition = try ProfileLoader.load(path: LocalServer.repositoryRoot.appendingPathComponent("profiles/login.yaml").path)
            let run = LoadRun(
                configuration: Self.configuration(server, accounts: 1...20, out: out, password: "wrong"),
                definition: definition, plan: .closed(sessions: 20, ramp: .seconds(1), duration: nil))
            let summary = try await run.run().summary
            #expect(summary.sessions.started == 20)
            #expect(summary.sessions.loggedIn == 0)
            #expect(summary.sessions.failed == 20)
            #expect(summary.errors == ["sasl-not-authorized": 20])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aRefusedConnectionIsCountedNotFatal() async throws {
        // A port nobody listens on: take a free port from a server we stop at once.
        let server = try LocalServer.start(accounts: 1)
        server.stop()
        let out = Self.temporaryDirectory("refused")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let definition = try ProfileLoader.load(path: LocalServer.repositoryRoot.appendingPathComponent("profiles/login.yaml").path)
        let run = LoadRun(
            configuration: Self.configuration(server, accounts: 1...5, out: out),
            definition: definition, plan: .closed(sessions: 5, ramp: .zero, duration: nil))
        let summary = try await run.run().summary
        #expect(summary.sessions.failed == 5)
        #expect(summary.errors == ["connect-refused": 5])
    }

    @Test(.timeLimit(.minutes(2)))
    func openModelDropsArrivalsWhenNoAccountIsFree() async throws {
        try await LocalServer.with(accounts: 10) { server in
            let out = Self.temporaryDirectory("open")
            defer { try? FileManager.default.removeItem(atPath: out) }
            // Idle sessions hold their accounts: 20 arrivals/s for 2 s against 10 accounts.
            let definition = try ProfileLoader.load(path: LocalServer.repositoryRoot.appendingPathComponent("profiles/idle.yaml").path)
            let run = LoadRun(
                configuration: Self.configuration(server, accounts: 1...10, out: out),
                definition: definition, plan: .open(rate: 20, duration: .seconds(2)))
            let summary = try await run.run().summary
            #expect(summary.sessions.started == 10)
            #expect(summary.sessions.loggedIn == 10)
            #expect(summary.generator.droppedArrivals == 30)
            #expect(summary.errors["dropped-no-free-account"] == 30)
            #expect(summary.sessions.failed == 0)
        }
    }
}
