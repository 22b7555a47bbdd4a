import Foundation
import LoadResults
import Testing

/// The cluster flags of `xmppload run`: every problem at once (exit 2), and a real run that waits for
/// `--start-at`, carries `--run-id` and applies `--var`.
@Suite(.serialized) struct ClusterFlagsTests {
    @Test func everyClusterFlagProblemAtOnce() throws {
        let result = try CommandLineTests.xmppload([
            "run", "profiles/cluster-cross.yaml", "--domain", "load.test", "--sessions", "1",
            "--server", "127.0.0.2:5222", "--server", "127.0.0.3", "--source", "127.0.0.9-127.0.0.2,bogus",
            "--var", "peerr=1", "--var", "novalue", "--start-at", "2001-01-01T00:00:00Z", "--run-id", "../x"])
        #expect(result.status == 2, "\(result.output)")
        for problem in ["--server '127.0.0.3' is not HOST:PORT[,weight=W]",
                        "--source: range '127.0.0.9-127.0.0.2' ends before it starts",
                        "--source: 'bogus' is not an IP address",
                        "--var peerr: the profile defines no variable 'peerr'; its variables are peer, peer_prefix",
                        "--var must be KEY=VALUE, got 'novalue'",
                        "--start-at 2001-01-01T00:00:00Z is",
                        "--run-id must be 1-64 letters"] {
            #expect(result.output.contains(problem), "missing '\(problem)' in:\n\(result.output)")
        }
    }

    /// Until the connect path uses them, several endpoints and source addresses are refused, not ignored.
    @Test func severalServersAndSourcesAreRefusedUntilWired() throws {
        let env = FileManager.default.temporaryDirectory.appendingPathComponent("servers-\(UUID().uuidString.prefix(6)).env")
        try "XMPPLOAD_SERVERS=127.0.0.2:5222,127.0.0.3:5222,weight=2\nXMPPLOAD_DOMAIN=load.test\n".write(to: env, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: env) }
        let servers = try CommandLineTests.xmppload(["run", "profiles/login.yaml", "--server-env", env.path, "--sessions", "1"])
        #expect(servers.status == 2)
        #expect(servers.output.contains("--server: 2 endpoints given; spreading sessions over several servers is not wired yet"), "\(servers.output)")
        let source = try CommandLineTests.xmppload(["run", "profiles/login.yaml", "--domain", "load.test", "--server", "127.0.0.1:5222",
                                                    "--sessions", "1", "--source", "127.0.0.2,127.0.0.3"])
        #expect(source.status == 2)
        #expect(source.output.contains("--source: binding to source addresses is not wired yet"), "\(source.output)")
    }

    @Test(.timeLimit(.minutes(2)))
    func aRunWaitsForStartAtAndKeepsItsRunID() throws {
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-start-at-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let launched = Date()
        let result = try CommandLineTests.xmppload([
            "run", "profiles/cluster-cross.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", server.domain,
            "--password", server.password, "--accounts", "1-4", "--sessions", "4", "--var", "peer=1", "--insecure",
            "--duration", "4s", "--start-at", "+3s", "--run-id", "gen-run.1", "--plain", "--out", out])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("waiting 3 s for --start-at"), "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.runID == "gen-run.1")
        // summary.json keeps whole seconds (ISO 8601), so "3 s after launch" reads as at least 2.
        #expect(summary.startedAt.timeIntervalSince(launched) >= 2, "started \(summary.startedAt.timeIntervalSince(launched)) s after launch")
        // --var peer=1: every session sent its two messages to user1, who is in the run and online.
        #expect(summary.messages.sent == 8 && summary.messages.received == 8, "\(summary.messages)")
    }
}
