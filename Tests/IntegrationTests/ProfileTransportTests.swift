import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// Profiles on different transports in one run (issues 15 and 16), as a user runs it: a mix file
/// whose member profiles say `transport: tcp`, `websocket` and `bosh`, whose endpoints are the mix's
/// `servers:` moved to a private Prosody with `--var`. Each test writes its files into its own
/// temporary directory; the run is bounded and stops by itself.
@Suite(.serialized) struct ProfileTransportTests {
    /// A member profile on `transport`; its `presence` step is named after it, so the summary counts
    /// its sessions (`online-<transport>`).
    static func member(_ transport: String) -> String {
        """
        name: chat-\(transport)
        transport: \(transport)
        login: {resource: \(transport)}
        steps:
          - login
          - {name: online-\(transport), presence: available}
          - think: 1s
          - message: {to: random, body_size: 60, count: 3, interval: 300ms}
          - stay_online
          - logout
        """
    }

    static let mix = """
        name: transports
        variables:
          tcp_server: 127.0.0.1:5222
          ws_server: ws://127.0.0.1:5280/xmpp-websocket
          bosh_server: http://127.0.0.1:5280/http-bind
        servers:
          - ${tcp_server}
          - ${ws_server}
          - {server: "${bosh_server}", weight: 1}
        mix:
          - {profile: tcp.yaml, weight: 1}
          - {profile: websocket.yaml, weight: 1}
          - {profile: bosh.yaml, weight: 1}
        """

    /// Writes the mix and its three members into a fresh directory; returns the mix's path.
    static func writeMix(_ mix: String = mix) throws -> (directory: URL, mix: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-transports-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for transport in ["tcp", "websocket", "bosh"] {
            try member(transport).write(to: directory.appendingPathComponent("\(transport).yaml"), atomically: true, encoding: .utf8)
        }
        let path = directory.appendingPathComponent("mix.yaml")
        try mix.write(to: path, atomically: true, encoding: .utf8)
        return (directory, path.path)
    }

    @Test(.timeLimit(.minutes(3)))
    func eachProfileRunsOnItsOwnTransportAndTheyChatWithEachOther() throws {
        let server = try LocalServer.start(accounts: 30)
        defer { server.stop() }
        let (directory, mix) = try Self.writeMix()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out").path
        let result = try CommandLineTests.xmppload([
            "run", mix, "--var", "tcp_server=\(server.host):\(server.port)", "--var", "ws_server=\(server.webSocketURL)",
            "--var", "bosh_server=\(server.boshURL)", "--domain", server.domain, "--password", server.password,
            "--accounts", "1-30", "--sessions", "30", "--ramp", "2s", "--duration", "8s", "--seed", "7",
            "--insecure", "--plain", "--interval", "2s", "--out", out,
        ])
        #expect(result.status == 0, "\(result.output)")
        // The first line names each profile's transport and the run's other endpoints.
        #expect(result.output.contains("chat-tcp ×1.0 [tcp], chat-websocket ×1.0 [websocket], chat-bosh ×1.0 [bosh] → "), "\(result.output)")
        #expect(result.output.contains("+2 endpoint(s) (\(server.domain))"), "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        let s = summary.sessions
        #expect(s.started == 30 && s.loggedIn == 30 && s.failed == 0 && s.completed == 30, "\(s), errors \(summary.errors)")
        #expect(summary.errors.keys.allSatisfy { $0 == "message-no-online-target" }, "errors: \(summary.errors)")
        #expect(summary.messages.sent > 0 && summary.messages.lost == 0 && summary.messages.duplicated == 0)
        #expect(summary.messages.received == summary.messages.sent)
        // Every session connected over its profile's transport: the connections per transport are the
        // sessions per profile, and each profile had some.
        let transports = try #require(summary.transports)
        let perProfile = ["tcp", "websocket", "bosh"].map { summary.latencyMilliseconds["online-\($0)"]?.count ?? 0 }
        #expect(perProfile.allSatisfy { $0 > 0 } && perProfile.reduce(0, +) == 30, "\(perProfile)")
        #expect([transports.tcp, transports.webSocket, transports.bosh] == perProfile, "\(transports) vs \(perProfile)")
        // Only TCP sessions did STARTTLS; only WebSocket sessions upgraded.
        #expect(summary.latencyMilliseconds["login.tls"]?.count == perProfile[0])
        #expect(summary.latencyMilliseconds["login.ws_upgrade"]?.count == perProfile[1])
        // The manifest records where the run went: the --var'd servers.
        let manifest = try String(contentsOfFile: "\(out)/manifest.json", encoding: .utf8)
        #expect(manifest.contains("\(server.host):\(server.port)"), "\(manifest)")
    }

    /// `--server` replaces the profile's `servers:` entirely; a profile whose transport then has no
    /// endpoint is refused before anything connects (exit 2, one line per profile).
    @Test func aRunWithoutAnEndpointForAProfilesTransportIsRefused() throws {
        let (directory, mix) = try Self.writeMix()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CommandLineTests.xmppload([
            "run", mix, "--server", "127.0.0.1:1", "--domain", "load.test", "--password", "secret", "--sessions", "3",
            "--duration", "1s", "--out", directory.appendingPathComponent("out").path,
        ])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("profile 'chat-websocket' has transport: websocket but the run has no websocket endpoint (it has tcp)"))
        #expect(result.output.contains("profile 'chat-bosh' has transport: bosh but the run has no bosh endpoint (it has tcp)"))
        #expect(!result.output.contains("chat-tcp"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))
    }

    /// The file's `servers:` come before the environment (`XMPPLOAD_SERVERS`, here from --server-env):
    /// with only a TCP server in the file, the web profiles are refused although the environment
    /// names web endpoints.
    @Test func theProfilesServersComeBeforeTheEnvironment() throws {
        let tcpOnly = Self.mix.replacingOccurrences(of: "  - ${ws_server}\n  - {server: \"${bosh_server}\", weight: 1}\n", with: "")
        try #require(tcpOnly != Self.mix)
        let (directory, mix) = try Self.writeMix(tcpOnly)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = directory.appendingPathComponent("server.env").path
        try "XMPPLOAD_SERVERS=127.0.0.1:1 ws://127.0.0.1:2/ws http://127.0.0.1:3/http-bind\n".write(
            toFile: environment, atomically: true, encoding: .utf8)
        let result = try CommandLineTests.xmppload([
            "run", mix, "--server-env", environment, "--domain", "load.test", "--password", "secret", "--sessions", "3",
            "--duration", "1s", "--out", directory.appendingPathComponent("out").path,
        ])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("profile 'chat-websocket' has transport: websocket but the run has no websocket endpoint (it has tcp)"))
        #expect(result.output.contains("profile 'chat-bosh' has transport: bosh but the run has no bosh endpoint (it has tcp)"))
    }

    /// The engine refuses such a run too (`LoadRun.run` throws before it resolves or connects
    /// anything, and writes no results), whoever calls it.
    @Test func theEngineRefusesAProfileWithoutAnEndpointOfItsTransport() async throws {
        let (directory, mix) = try Self.writeMix()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out").path
        var configuration = RunConfiguration(
            host: "127.0.0.1", port: 1, domain: "load.test", accounts: 1...3, password: "secret", outputDirectory: out)
        configuration.endpoints = try ["127.0.0.1:1", "http://127.0.0.1:2/http-bind"].map { try WeightedEndpoint.parse($0).get() }
        let run = LoadRun(
            configuration: configuration, definition: try ProfileLoader.load(path: mix),
            plan: .closed(sessions: 3, ramp: .zero, duration: .seconds(1)))
        do {
            _ = try await run.run().summary
            Issue.record("the run started")
        } catch let error as TransportMismatchError {
            #expect(error.missing.map(\.profile) == ["chat-websocket"] && error.available == ["bosh", "tcp"])
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// `check` knows the endpoints when the file has `servers:`: every bad entry and every profile
    /// without an endpoint of its transport, each at file:line:column.
    @Test func checkReportsBadServersAndTransportsWithoutAServer() throws {
        let bad = Self.mix.replacingOccurrences(of: "  - ${tcp_server}\n", with: "  - ${tcp_srever}\n  - 127.0.0.1:70000\n")
        try #require(bad != Self.mix)
        let (directory, mix) = try Self.writeMix(bad)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CommandLineTests.xmppload(["check", mix])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("mix.yaml:7:5: error: servers: undefined variable '${tcp_srever}'"), "\(result.output)")
        #expect(result.output.contains("mix.yaml:8:5: error: servers: '127.0.0.1:70000' is not HOST:PORT"), "\(result.output)")
        #expect(result.output.contains("2 problems found"), "\(result.output)")

        // With --var, check reads the servers as the run would.
        try Self.mix.write(toFile: mix, atomically: true, encoding: .utf8)
        let moved = try CommandLineTests.xmppload(["check", mix, "--var", "tcp_server=127.0.0.1", "--var", "nope=1"])
        #expect(moved.status == 2, "\(moved.output)")
        #expect(moved.output.contains("mix.yaml:1:1: error: --var nope: the profile defines no variable 'nope'"), "\(moved.output)")
        let fine = try CommandLineTests.xmppload(["check", mix, "--var", "tcp_server=127.0.0.1"])
        #expect(fine.status == 2, "\(fine.output)")
        #expect(fine.output.contains("mix.yaml:7:5: error: servers: '127.0.0.1' is not HOST:PORT"), "\(fine.output)")
        #expect(fine.output.contains("(from '${tcp_server}')"), "\(fine.output)")
        let good = try CommandLineTests.xmppload(["check", mix, "--var", "tcp_server=127.0.0.2:5300"])
        #expect(good.status == 0 && good.output.contains("3 servers"), "\(good.output)")

        let webless = Self.mix.replacingOccurrences(of: "  - ${ws_server}\n", with: "")
        try #require(webless != Self.mix)
        try webless.write(toFile: mix, atomically: true, encoding: .utf8)
        let second = try CommandLineTests.xmppload(["check", mix])
        #expect(second.status == 2, "\(second.output)")
        #expect(
            second.output.contains(
                "websocket.yaml:2:12: error: profile 'chat-websocket' has transport: websocket but the run has no websocket endpoint"),
            "\(second.output)")
        #expect(second.output.contains("1 problem found"), "\(second.output)")
    }
}
