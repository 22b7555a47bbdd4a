import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing
import XMPPCore

/// XEP-0198 against a real Prosody (mod_smacks): every session's TCP connection is cut mid-run by a
/// loopback proxy the test controls; each session resumes its stream (Prosody kept it hibernating),
/// resends what the server had not acknowledged, receives what the server had queued, and the run
/// ends with nothing lost and no fresh login.
@Suite struct StreamManagementIntegrationTests {
    static let profile = """
        name: sm-resume
        login: {sasl: SCRAM-SHA-1, tls: none}
        stream_management: {resume: true, request_every: 3}
        steps:
          - login
          - presence: available
          - think: 1s
          - message:
              to: random
              body_size: 40
              count: 40
              interval: 200ms
          - stay_online
        """

    @Test(.timeLimit(.minutes(3)))
    func sessionsResumeAfterTheirConnectionsAreCutAndNothingIsLost() async throws {
        let sessions = 20
        let server = try LocalServer.start(accounts: sessions)
        defer { server.stop() }
        let proxy = try DelayProxy(upstreamPort: server.port, delay: .zero)
        defer { proxy.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-it-sm-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let definition = try ProfileLoader.load(yaml: Self.profile, file: "sm-resume.yaml")
        let configuration = RunConfiguration(
            host: "127.0.0.1", port: proxy.port, domain: server.domain,
            accounts: 1...sessions, password: server.password, tls: TLSMode.none,
            outputDirectory: out, interval: .seconds(1))
        let run = LoadRun(
            configuration: configuration, definition: definition,
            plan: .closed(sessions: sessions, ramp: .seconds(1), duration: .seconds(25)))
        let watcher = OnlineWatcher()
        async let running = run.run(sinks: [watcher])
        // Once everyone is online (stream management enabled right after bind) and messaging (40
        // messages over 8 s each), cut every connection.
        let allOnline = try await watcher.waitUntilOnline(sessions, within: .seconds(15))
        proxy.cutAll()
        #expect(allOnline, "every session was online before the cut")
        let result = try await running.summary

        let counts = result.sessions
        #expect(counts.loggedIn == UInt64(sessions))
        #expect((counts.resumed ?? 0) >= UInt64(sessions), "every session resumed: \(result.errors)")
        #expect((counts.resumeFailed ?? 0) == 0 && (counts.reconnected ?? 0) == 0, "no fresh login was needed")
        #expect(counts.failed == 0 && counts.completed == UInt64(sessions), "errors: \(result.errors)")
        // While every connection is down at once, a `to: random` pick may find nobody online (counted).
        let noTarget = result.errors["message-no-online-target"] ?? 0
        #expect(result.messages.sent + noTarget == UInt64(sessions * 40))
        #expect(result.messages.lost == 0, "sent \(result.messages.sent), received \(result.messages.received)")
        #expect(result.messages.received >= result.messages.sent)
        #expect((result.latencyMilliseconds["login.resume"]?.count ?? 0) == counts.resumed)
        let dropKinds = ["connection-closed", "connection-reset", "stream-closed", "message-no-online-target"]
        #expect(result.errors.keys.allSatisfy { dropKinds.contains($0) }, "errors: \(result.errors)")
    }
}
