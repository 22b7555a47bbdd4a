import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// The cluster flags of `xmppload run`: every problem at once (exit 2), a server name that does not
/// resolve (the run fails at start, naming it), and a real run that waits for `--start-at`, carries
/// `--run-id` and applies `--var`.
@Suite(.serialized) struct ClusterFlagsTests {
    @Test func everyClusterFlagProblemAtOnce() throws {
        let result = try CommandLineTests.xmppload([
            "run", "profiles/cluster-cross.yaml", "--domain", "load.test", "--sessions", "1",
            "--server", "127.0.0.2:5222", "--server", "127.0.0.3", "--source", "127.0.0.9-127.0.0.2,bogus",
            "--var", "peerr=1", "--var", "novalue", "--start-at", "2001-01-01T00:00:00Z", "--run-id", "../x",
        ])
        #expect(result.status == 2, "\(result.output)")
        for problem in [
            "--server '127.0.0.3' is not HOST:PORT[,weight=W]",
            "--source: range '127.0.0.9-127.0.0.2' ends before it starts",
            "--source: 'bogus' is not an IP address",
            "--var peerr: the profile defines no variable 'peerr'; its variables are peer, peer_prefix",
            "--var must be KEY=VALUE, got 'novalue'",
            "--start-at 2001-01-01T00:00:00Z is",
            "--run-id must be 1-64 letters",
        ] {
            #expect(result.output.contains(problem), "missing '\(problem)' in:\n\(result.output)")
        }
    }

    /// Two private Prosodys weighted 2:1 (`--server A,weight=2 --server B`), connections bound to two
    /// source addresses (`--source`): each server authenticates its share of the sessions, and the
    /// established connections come from both source addresses.
    @Test(.timeLimit(.minutes(3)))
    func sessionsSpreadOverServersByWeightAndBindToSourceAddresses() throws {
        let a = try LocalServer.start(accounts: 30)
        defer { a.stop() }
        let b = try LocalServer.start(accounts: 30)
        defer { b.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-spread-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let child = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.appendingPathComponent("profiles/idle.yaml").path,
                "--server", "127.0.0.1:\(a.port),weight=2", "--server", "127.0.0.1:\(b.port)", "--domain", a.domain,
                "--password", a.password, "--accounts", "1-30", "--sessions", "30", "--ramp", "2s", "--duration", "8s",
                "--source", "127.0.0.2,127.0.0.3", "--insecure", "--plain", "--out", out,
            ])
        defer { child.removeLog() }
        // Once everyone is connected (polled, with a deadline inside the run's 8 s): whose
        // connections are they?
        var (connections, sources) = try Self.established(toPorts: [a.port, b.port])
        let deadline = Date().addingTimeInterval(7)
        while connections.count < 30, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            (connections, sources) = try Self.established(toPorts: [a.port, b.port])
        }
        #expect(connections.count == 30, "\(connections.count) connections established before the deadline")
        let status = child.wait(timeout: 60)
        #expect(status == 0, "\(child.output)")
        #expect(sources == ["127.0.0.2", "127.0.0.3"], "connections came from \(sources)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.sessions.loggedIn == 30 && summary.sessions.failed == 0, "\(summary.errors)")
        func logins(_ server: LocalServer) throws -> Int {
            try String(contentsOfFile: "\(server.directory)/prosody.log", encoding: .utf8)
                .components(separatedBy: "Authenticated as").count - 1
        }
        let (onA, onB) = (try logins(a), try logins(b))
        #expect(onA == 20 && onB == 10, "A \(onA), B \(onB)")
    }

    /// The established TCP connections to `ports` on this machine (`ss`): each one's local
    /// address:port, and the set of local addresses they come from.
    static func established(toPorts ports: [Int]) throws -> (connections: [String], sources: Set<String>) {
        var connections: [String] = []
        var sources: Set<String> = []
        for port in ports {
            let ss = try ChildProcess.spawn("/usr/bin/ss", ["-Htn", "state", "established", "( dport = :\(port) )"])
            _ = ss.wait(timeout: 10)
            for line in ss.output.split(separator: "\n") {
                // Local Address:Port is the third column without -H's state column: Recv-Q Send-Q Local Peer.
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                if columns.count >= 3, let colon = columns[2].lastIndex(of: ":") {
                    connections.append(String(columns[2]))
                    sources.insert(String(columns[2][..<colon]))
                }
            }
            ss.removeLog()
        }
        return (connections, sources)
    }

    /// A server name that does not resolve fails the run at start, named, before any session starts
    /// or any result is written. The name has a 70-byte label, which the C library refuses before
    /// asking a DNS server, so no query leaves this machine.
    @Test(.timeLimit(.minutes(1)))
    func aServerNameThatDoesNotResolveFailsTheRunAtStartNamingIt() async throws {
        let name = "no-such-node-" + String(repeating: "x", count: 57) + ".test"
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-bad-name-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload([
            "run", "profiles/idle.yaml", "--server", "127.0.0.1:5222", "--server", "\(name):5222", "--domain", "load.test",
            "--password", "secret", "--accounts", "1-2", "--sessions", "2", "--duration", "2s", "--plain", "--out", out,
        ])
        // A configuration mistake: exit 2, like every other refused setting, naming the endpoint.
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("1 of 2 server endpoint(s) do not resolve: \(name):5222"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/summary.json"), "no run happened")

        // The engine itself: the error names every bad endpoint; nothing is written.
        let engineOut = out + "-engine"
        defer { try? FileManager.default.removeItem(atPath: engineOut) }
        let definition = try ProfileLoader.load(yaml: "name: t\nsteps: [login, stay_online]\n", file: "t.yaml")
        let configuration = RunConfiguration(
            host: name, port: 5222, domain: "load.test", accounts: 1...2, password: "secret", outputDirectory: engineOut)
        let run = LoadRun(configuration: configuration, definition: definition, plan: .closed(sessions: 2, ramp: .zero, duration: .seconds(1)))
        do {
            _ = try await run.run().summary
            Issue.record("the run started with an unresolvable server name")
        } catch let error as EndpointResolutionError {
            #expect(error.unresolved.map(\.endpoint) == ["\(name):5222"])
        }
        #expect(!FileManager.default.fileExists(atPath: engineOut), "the results directory is not even made")
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
            "--duration", "4s", "--start-at", "+3s", "--run-id", "gen-run.1", "--plain", "--out", out,
        ])
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
