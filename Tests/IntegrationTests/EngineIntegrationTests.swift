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

    static func configuration(_ server: LocalServer, accounts: ClosedRange<Int>, out: String,
                              password: String? = nil, port: Int? = nil) -> RunConfiguration {
        RunConfiguration(host: server.host, port: port ?? server.port, domain: server.domain, accounts: accounts,
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
            let summary = try await run.run()

            #expect(summary.generator.droppedArrivals == 0, "dropped \(summary.generator.droppedArrivals), stop \(summary.stopReason), saturated \(summary.generator.saturated), lag \(summary.generator.maxLoopLagMilliseconds) ms")
            #expect(summary.sessions.started == 1000)
            #expect(summary.sessions.loggedIn == 1000)
            #expect(summary.sessions.failed == 0)
            #expect(summary.sessions.peakConcurrent == 1000)
            #expect(summary.errors.isEmpty, "errors: \(summary.errors)")
            #expect(summary.messages.sent == 3000)
            #expect(summary.messages.received == 3000)
            #expect(summary.messages.lost == 0)
            #expect(summary.messages.duplicated == 0)
            // Every login went through STARTTLS and SCRAM, and every phase was timed.
            for name in ["login", "login.connect", "login.tls", "login.features", "login.sasl", "login.bind", "roster.get", "presence"] {
                let latency = try #require(summary.latencyMilliseconds[name], "no \(name) latency")
                #expect(latency.count == 1000, "\(name): \(latency.count)")
                #expect(latency.p50 > 0 && latency.p99 < 10_000, "\(name) implausible: \(latency)")
                #expect(latency.p50 <= latency.p99 && latency.p99 <= latency.max)
            }
            let message = try #require(summary.latencyMilliseconds["message"])
            #expect(message.count == 3000)
            #expect(message.p50 > 0 && message.p99 < 10_000)
            #expect(summary.bytes.sent > 1000 * 1000 && summary.bytes.received > 1000 * 2000)
            #expect(summary.generator.cpuSeconds > 0 && summary.generator.peakRSSBytes > 0)

            // The results directory holds what `report` needs.
            let directory = ResultsDirectory(path: out)
            let written = try directory.readSummary()
            #expect(written.runID == summary.runID && written.sessions == summary.sessions && written.messages == summary.messages)
            #expect(written.latencyMilliseconds == summary.latencyMilliseconds)
            let intervals = try directory.readIntervals()
            #expect(intervals.count >= 10)
            var total = IntervalSnapshot()
            for interval in intervals { total.accumulate(interval) }
            #expect(total.counter(.sessionsLoggedIn) == 1000)
            #expect(total.latency["login"]?.count == 1000)
            #expect(try directory.readManifest().stopReason == "duration")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aWrongPasswordFailsEachSessionWithATypedErrorAndTheRunGoesOn() async throws {
        try await LocalServer.with(accounts: 20) { server in
            let out = Self.temporaryDirectory("badpw")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let definition = try ProfileLoader.load(path: LocalServer.repositoryRoot.appendingPathComponent("profiles/login.yaml").path)
            let run = LoadRun(configuration: Self.configuration(server, accounts: 1...20, out: out, password: "wrong"),
                              definition: definition, plan: .closed(sessions: 20, ramp: .seconds(1), duration: nil))
            let summary = try await run.run()
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
        let run = LoadRun(configuration: Self.configuration(server, accounts: 1...5, out: out),
                          definition: definition, plan: .closed(sessions: 5, ramp: .zero, duration: nil))
        let summary = try await run.run()
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
            let run = LoadRun(configuration: Self.configuration(server, accounts: 1...10, out: out),
                              definition: definition, plan: .open(rate: 20, duration: .seconds(2)))
            let summary = try await run.run()
            #expect(summary.sessions.started == 10)
            #expect(summary.sessions.loggedIn == 10)
            #expect(summary.generator.droppedArrivals == 30)
            #expect(summary.errors["dropped-no-free-account"] == 30)
            #expect(summary.sessions.failed == 0)
        }
    }
}
