import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// XMPP over WebSocket (RFC 7395) and BOSH (XEP-0206) against a real Prosody on loopback
/// (scripts/local-server enables mod_websocket and mod_bosh on a free HTTP port). Each test starts
/// its own server, runs a bounded load that stops by itself, and checks what the run guarantees:
/// every session logs in, chats and logs out, nothing is lost, and the transport's own measures
/// (upgrade, HTTP requests and responses, bytes) are in the results.
@Suite(.serialized) struct WebTransportTests {
    static let chatProfile = """
        name: web-chat
        login: {resource: web}
        steps:
          - login
          - presence: available
          - think: 1s
          - message: {to: random, body_size: 60, count: 3, interval: 300ms}
          - stay_online
          - logout
        """

    /// Runs `profile` (the chat profile unless told) with `sessions` sessions spread over
    /// `endpoints` (`--insecure` unless told), ramping up over 2 s, for at most `duration`.
    static func run(
        _ server: LocalServer, endpoints: [String], sessions: Int, name: String, profile: String = chatProfile,
        insecure: Bool = true, duration: Duration = .seconds(8)
    ) async throws -> (RunSummary, String) {
        let out = EngineIntegrationTests.temporaryDirectory(name)
        let parsed = try endpoints.map { try WeightedEndpoint.parse($0).get() }
        // As `run` does: the first endpoint is the run's server (the only one when there is one).
        var configuration = RunConfiguration(
            host: parsed[0].host, port: parsed[0].port, domain: server.domain, accounts: 1...sessions,
            password: server.password, tls: .startTLS, insecure: insecure, mechanism: .scramSHA1,
            outputDirectory: out, interval: .seconds(2))
        configuration.endpoints = parsed
        let definition = try ProfileLoader.load(yaml: profile, file: "\(name).yaml")
        let run = LoadRun(
            configuration: configuration, definition: definition,
            plan: .closed(sessions: sessions, ramp: .seconds(2), duration: duration))
        return (try await run.run().summary, out)
    }

    /// What every web-transport run here must show: all sessions logged in and out, none failed,
    /// every message delivered once.
    static func expectCleanChat(_ summary: RunSummary, sessions: Int) {
        let s = summary.sessions
        #expect(s.started == UInt64(sessions), "dropped \(summary.generator.droppedArrivals), errors \(summary.errors)")
        #expect(s.loggedIn == s.started && s.failed == 0 && s.completed == s.started, "\(s), errors \(summary.errors)")
        #expect(summary.errors.keys.allSatisfy { $0 == "message-no-online-target" }, "errors: \(summary.errors)")
        #expect(summary.messages.sent > 0)
        #expect(summary.messages.lost == 0 && summary.messages.duplicated == 0)
        #expect(summary.messages.received == summary.messages.sent)
        for name in ["login", "login.connect", "login.features", "login.sasl", "login.bind", "message"] {
            #expect(summary.latencyMilliseconds[name] != nil, "no \(name) latency")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func sessionsLogInChatAndLogOutOverWebSocket() async throws {
        try await LocalServer.with(accounts: 20) { server in
            let (summary, out) = try await Self.run(server, endpoints: [server.webSocketURL], sessions: 20, name: "ws")
            defer { try? FileManager.default.removeItem(atPath: out) }
            Self.expectCleanChat(summary, sessions: 20)
            // No STARTTLS over WebSocket; the upgrade is a login phase; every connection is one.
            #expect(summary.latencyMilliseconds["login.tls"] == nil)
            #expect(summary.latencyMilliseconds["login.ws_upgrade"]?.count == 20)
            let transports = try #require(summary.transports)
            #expect(transports.webSocket == 20 && transports.tcp == 0 && transports.bosh == 0)
            #expect(transports.httpRequests == 20 && transports.httpResponses == 20)
            // Bytes on the wire include HTTP and frame headers: more than the stanzas alone.
            #expect(summary.bytes.sent > 20 * 1000 && summary.bytes.received > 20 * 2000)
            let report = TextReport.render(summary)
            #expect(report.contains("transports tcp 0  websocket 20  bosh 0"), "\(report)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func sessionsLogInChatAndLogOutOverBOSH() async throws {
        try await LocalServer.with(accounts: 20) { server in
            let (summary, out) = try await Self.run(server, endpoints: [server.boshURL], sessions: 20, name: "bosh")
            defer { try? FileManager.default.removeItem(atPath: out) }
            Self.expectCleanChat(summary, sessions: 20)
            #expect(summary.latencyMilliseconds["login.tls"] == nil)
            let transports = try #require(summary.transports)
            #expect(transports.bosh == 20 && transports.tcp == 0 && transports.webSocket == 0)
            // Each session made at least its creation, SASL, restart, bind, presence and terminate
            // requests; every one was answered, the long poll held at logout included (the session
            // closes only once the server answered it and the terminate).
            #expect(transports.httpRequests == transports.httpResponses, "\(transports)")
            #expect(transports.httpRequests >= 20 * 6, "\(transports)")
            let requests = try #require(summary.latencyMilliseconds["bosh.request"])
            #expect(requests.count > 0 && requests.p50 <= requests.max)
            // Messages reached idle sessions through their long polls.
            #expect(summary.latencyMilliseconds["bosh.poll"] != nil)
            let report = TextReport.render(summary)
            #expect(report.contains("transports tcp 0  websocket 0  bosh 20"), "\(report)")
        }
    }

    /// TCP, WebSocket and BOSH sessions in one run, messaging each other (targets are random among
    /// all online sessions), all three in one report.
    @Test(.timeLimit(.minutes(3)))
    func aMixedRunPutsSessionsOnAllThreeTransportsAndTheyChatWithEachOther() async throws {
        try await LocalServer.with(accounts: 30) { server in
            let endpoints = ["\(server.host):\(server.port)", server.webSocketURL, server.boshURL]
            let (summary, out) = try await Self.run(server, endpoints: endpoints, sessions: 30, name: "mixed")
            defer { try? FileManager.default.removeItem(atPath: out) }
            Self.expectCleanChat(summary, sessions: 30)
            let transports = try #require(summary.transports)
            // Weights 1:1:1 spread arrivals round robin: 10 sessions each.
            #expect(transports.tcp == 10 && transports.webSocket == 10 && transports.bosh == 10, "\(transports)")
            // TCP sessions did STARTTLS (the run's --tls); web sessions did not.
            #expect(summary.latencyMilliseconds["login.tls"]?.count == 10)
            #expect(summary.latencyMilliseconds["login.ws_upgrade"]?.count == 10)
            #expect(summary.latencyMilliseconds["bosh.request"] != nil)
            // Every HTTP request (10 upgrades, the BOSH sessions' requests) was answered.
            #expect(transports.httpRequests == transports.httpResponses, "\(transports)")
            let report = TextReport.render(summary)
            #expect(report.contains("transports tcp 10  websocket 10  bosh 10"), "\(report)")
            // The written summary says the same.
            let written = try ResultsDirectory(path: out).readSummary()
            #expect(written.transports == summary.transports)
        }
    }
}
