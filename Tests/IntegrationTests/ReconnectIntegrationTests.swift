import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing
import XMPPCore

/// Sessions survive a server restart: a private Prosody is stopped mid-run (it sends every session
/// `<system-shutdown/>` and closes) and started again on the same port a few seconds later; sessions
/// with a reconnect policy come back, log in again (timed), and the run ends with every session
/// logged out cleanly.
@Suite struct ReconnectIntegrationTests {
    static let profile = """
        name: survive
        login: {sasl: SCRAM-SHA-1, tls: none}
        reconnect: {attempts: 30, initial: 500ms, max: 2s}
        steps:
          - login
          - presence: available
          - stay_online
        """

    @Test(.timeLimit(.minutes(3)))
    func sessionsReconnectAfterTheServerRestartsAndTheRunCompletes() async throws {
        let sessions = 40
        let server = try LocalServer.start(accounts: sessions)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-it-reconnect-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let definition = try ProfileLoader.load(yaml: Self.profile, file: "survive.yaml")
        let configuration = RunConfiguration(
            host: server.host, port: server.port, domain: server.domain,
            accounts: 1...sessions, password: server.password, tls: TLSMode.none,
            outputDirectory: out, interval: .seconds(1))
        let run = LoadRun(
            configuration: configuration, definition: definition,
            plan: .closed(sessions: sessions, ramp: .seconds(2), duration: .seconds(25)))
        let watcher = OnlineWatcher()
        async let running = run.run(sinks: [watcher])
        // Once everyone is online (polled), the server goes away for ~3 s.
        let allOnline = try await watcher.waitUntilOnline(sessions, within: .seconds(12))
        #expect(allOnline, "every session was online before the restart")
        _ = try LocalServer.run(["down", "--dir", server.directory])
        // This sleep is the thing under test, not a wait for a condition: the outage's length. Three
        // seconds span several reconnect attempts (500 ms, backing off to 2 s) refused by the dead port.
        try await Task.sleep(for: .seconds(3))
        _ = try LocalServer.run(["up", "--dir", server.directory, "--port", String(server.port), "--accounts", String(sessions)])
        let result = try await running.summary

        let counts = result.sessions
        #expect(counts.started == UInt64(sessions))
        #expect(counts.loggedIn == UInt64(sessions), "every session logged in before the restart")
        #expect((counts.reconnected ?? 0) >= UInt64(sessions), "every session came back at least once: \(result.errors)")
        #expect((counts.reconnects ?? 0) >= (counts.reconnected ?? 0))
        #expect(counts.failed == 0 && counts.completed == UInt64(sessions), "errors: \(result.errors)")
        // The drop is counted by kind; nothing else went wrong.
        let dropKinds = ["stream-system-shutdown", "connection-closed", "connection-reset", "stream-closed", "connect-refused", "timeout-login"]
        #expect(result.errors.keys.allSatisfy { dropKinds.contains($0) }, "errors: \(result.errors)")
        #expect((result.latencyMilliseconds["reconnect.login"]?.count ?? 0) == counts.reconnected)
        #expect(result.latencyMilliseconds["login"]?.count == counts.loggedIn + (counts.reconnected ?? 0))
        #expect(result.stopReason == "duration")
    }

    /// `--churn 4/s` over a 10 s load with 20 idle sessions: about 40 drops, each session comes back.
    @Test(.timeLimit(.minutes(2)))
    func churnDropsAndReconnectsSessionsWhileTheLoadRuns() throws {
        let server = try LocalServer.start(accounts: 20)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-churn-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload([
            "run", "profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", server.domain,
            "--password", server.password, "--accounts", "1-20", "--sessions", "20", "--ramp", "1s", "--duration", "12s",
            "--churn", "4/s", "--insecure", "--plain", "--out", out,
        ])
        #expect(result.status == 0, "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        let churned = summary.sessions.churned ?? 0
        // 4/s from ~1 s to 12 s: about 44; a busy machine skips ticks whose pick is not running.
        #expect((20...50).contains(churned), "churned \(churned)")
        // Each churn is followed by a login again; only sessions still in their back-off (≤ 2 s) when the
        // load stopped do not come back — at 4/s, a handful. Nothing reconnecting fails this.
        let reconnected = summary.sessions.reconnected ?? 0
        #expect(reconnected >= churned * 3 / 4 && reconnected <= churned, "reconnected \(reconnected) of \(churned)")
        #expect((summary.sessions.reconnects ?? 0) >= reconnected)
        #expect(summary.sessions.failed == 0 && summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.sessions.completed == 20)
    }
}
