import Foundation
import LoadResults
import Testing

/// The `xmppload` binary as a user runs it: the README's examples, exit codes, signals.
@Suite(.serialized) struct CommandLineTests {
    static var binary: String {
        LocalServer.repositoryRoot.appendingPathComponent(".build/debug/xmppload").path
    }

    struct Result {
        let status: Int32
        let output: String
    }

    /// Runs the binary with a time limit; `signalAfter` sends SIGTERM after that many seconds.
    static func xmppload(_ arguments: [String], signalAfter: Double? = nil, timeout: Double = 120) throws -> Result {
        // Relative paths (profiles/…) resolve against the repository root, as in the README.
        let root = LocalServer.repositoryRoot.path
        let absolute = arguments.map { $0.hasPrefix("profiles/") ? root + "/" + $0 : $0 }
        let child = try ChildProcess.spawn(binary, absolute)
        defer { child.removeLog() }
        let status = child.wait(timeout: timeout, signalAfter: signalAfter)
        return Result(status: status, output: child.output)
    }

    @Test(.timeLimit(.minutes(3)))
    func theReadmeRunExampleWorks() throws {
        let server = try LocalServer.start(accounts: 200)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-cli-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        // README: xmppload run profiles/chat.yaml --server 127.0.0.1:5222 --domain load.test \
        //   --accounts 1-2000 --password secret --sessions 2000 --duration 90s --out results/chat-1
        // (scaled down: 200 sessions, 20 s, and the private server's port; --insecure for its certificate)
        let result = try Self.xmppload([
            "run", "profiles/chat.yaml", "--server", "127.0.0.1:\(server.port)",
            "--domain", "load.test", "--accounts", "1-200", "--password", "secret",
            "--sessions", "200", "--ramp", "4s", "--duration", "20s", "--insecure",
            "--out", out, "--interval", "2s",
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("online"), "no progress lines:\n\(result.output)")
        #expect(result.output.contains("login.sasl"))
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.sessions.loggedIn == 200)
        #expect(summary.sessions.failed == 0)
        #expect(summary.messages.sent > 0)
        for file in ["summary.json", "intervals.jsonl", "manifest.json"] {
            #expect(FileManager.default.fileExists(atPath: out + "/" + file), "\(file) missing")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func sigtermStopsGracefullyAndFlushesResults() throws {
        let server = try LocalServer.start(accounts: 50)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-sigterm-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try Self.xmppload(
            [
                "run", "profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", "load.test", "--accounts", "1-50", "--password", "secret",
                "--sessions", "50", "--duration", "10m", "--insecure", "--out", out,
                "--interval", "1s",
            ], signalAfter: 4, timeout: 60)
        #expect(result.status == 130, "an interrupted run has its own exit code: \(result.output)")
        #expect(result.output.contains("stopping (interrupted)"))
        let directory = ResultsDirectory(path: out)
        let summary = try directory.readSummary()
        #expect(summary.stopReason == "interrupted")
        #expect(summary.sessions.loggedIn == 50)
        #expect(summary.sessions.completed == 50, "idle sessions log out cleanly on SIGTERM")
        #expect(try directory.readIntervals().count >= 3)
    }

    /// `--segment i/N`: two generators run one plan together, on disjoint accounts, and `report`
    /// merges their directories into the whole run.
    @Test(.timeLimit(.minutes(3)))
    func twoSegmentsRunThePlanOnceOnDisjointAccounts() throws {
        let server = try LocalServer.start(accounts: 40)
        defer { server.stop() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-segments-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let root = LocalServer.repositoryRoot.path
        let children = try (0..<2).map { index in
            try ChildProcess.spawn(
                Self.binary,
                [
                    "run", root + "/profiles/login.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", "load.test",
                    "--accounts", "1-40", "--password", "secret", "--sessions", "40", "--ramp", "2s", "--insecure",
                    "--segment", "\(index)/2", "--out", "\(base)/gen-\(index)", "--interval", "1s", "--seed", "7",
                ])
        }
        defer { children.forEach { $0.removeLog() } }
        for child in children {
            let status = child.wait(timeout: 90)
            #expect(status == 0, "\(child.output)")
        }
        for (index, accounts) in ["user1-20", "user21-40"].enumerated() {
            let directory = ResultsDirectory(path: "\(base)/gen-\(index)")
            let summary = try directory.readSummary()
            #expect(summary.sessions.started == 20)
            #expect(summary.sessions.loggedIn == 20)
            #expect(summary.sessions.failed == 0)
            let manifest = try directory.readManifest()
            #expect(manifest.segment == "\(index)/2")
            #expect(manifest.accounts == accounts)
        }
        let merged = try Self.xmppload(["report", "\(base)/gen-0", "\(base)/gen-1", "--json", "--html", "\(base)/merged.html"])
        #expect(merged.status == 0, "\(merged.output)")
        try FileManager.default.createDirectory(atPath: "\(base)/merged", withIntermediateDirectories: true)
        try Data(merged.output.utf8).write(to: URL(fileURLWithPath: "\(base)/merged/summary.json"))
        let summary = try ResultsDirectory(path: "\(base)/merged").readSummary()
        #expect(summary.sessions.loggedIn == 40)
        #expect(summary.latencyMilliseconds["login"]?.count == 40)
    }

    @Test func aBadSegmentIsAUsageError() throws {
        let result = try Self.xmppload([
            "run", "profiles/login.yaml", "--domain", "load.test", "--sessions", "5",
            "--accounts", "1-2", "--segment", "0/3",
        ])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("--segment 0/3: --accounts 1-2 has fewer accounts than segments"), "\(result.output)")
        let malformed = try Self.xmppload(["run", "profiles/login.yaml", "--domain", "load.test", "--sessions", "5", "--segment", "3/3"])
        #expect(malformed.status == 2)
        #expect(malformed.output.contains("--segment must be i/N with 0 <= i < N, got '3/3'"), "\(malformed.output)")
    }

    @Test func aBrokenProfileExitsTwoWithEveryProblem() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString.prefix(6)).yaml")
        try """
        name: broken
        stepz: []
        steps:
          - message: {to: random, body_size: -5}
          - think: {uniform: [3s, 1s]}
          - login
        """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Self.xmppload(["run", file.path, "--domain", "load.test", "--sessions", "1"])
        #expect(result.status == 2)
        #expect(result.output.contains("\(file.path):2:1: error: unknown key 'stepz'"))
        #expect(result.output.contains("\(file.path):4:38: error: body_size must be at least 1, got -5"))
        #expect(result.output.contains("\(file.path):4:5: error: a message step before login"))
        #expect(result.output.contains("\(file.path):5:22: error: think.uniform range is inverted"))
    }

    @Test func versionPrintsTheToolVersion() throws {
        let result = try Self.xmppload(["--version"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "xmppload \(RunManifest.currentToolVersion)")
    }

    @Test func usageErrorsExitTwo() throws {
        let result = try Self.xmppload(["run", "profiles/login.yaml", "--domain", "load.test", "--sessions", "5", "--rate", "3"])
        #expect(result.status == 2, "\(result.status): \(result.output)")
        #expect(result.output.contains("exclude each other"))
    }

    /// `run` reads the load flags with `plan`'s rules (LoadFlags) and names every problem at once.
    @Test func runReportsEveryLoadFlagProblemAtOnce() throws {
        let result = try Self.xmppload([
            "run", "profiles/login.yaml", "--domain", "load.test", "--sessions", "0",
            "--ramp", "ten", "--interval", "soon", "--tls", "carrier-pigeon",
        ])
        #expect(result.status == 2, "\(result.status): \(result.output)")
        for problem in [
            "--sessions must be between 1 and", "--ramp: 'ten' is not a duration",
            "--interval: 'soon' is not a duration", "--tls must be starttls, direct or none",
        ] {
            #expect(result.output.contains(problem), "missing '\(problem)' in:\n\(result.output)")
        }
    }
}

/// `xmppload provision` against a server that starts with no accounts.
@Suite(.serialized) struct ProvisionCommandTests {
    @Test(.timeLimit(.minutes(2)))
    func provisionCreatesAccountsWithMutualRostersAndIsIdempotent() throws {
        let server = try LocalServer.start(accounts: 0)
        defer { server.stop() }
        let arguments = [
            "provision", "--server", "127.0.0.1:\(server.port)", "--domain", server.domain, "--accounts", "1-25",
            "--password", "pw", "--concurrency", "10", "--rosters", "--insecure",
        ]
        let first = try CommandLineTests.xmppload(arguments)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("provisioned user1..25@load.test: created 25, existed 0, failed 0"), "\(first.output)")
        let second = try CommandLineTests.xmppload(arguments)
        #expect(second.output.contains("created 0, existed 25, failed 0"), "\(second.output)")
        // Neighbours are mutual contacts in the server's own storage, including across batches and the ring's ends.
        for (user, contacts) in [(5, [4, 6]), (10, [9, 11]), (1, [25, 2])] {
            let roster = try String(contentsOfFile: "\(server.directory)/data/load%2etest/roster/user\(user).dat", encoding: .utf8)
            for contact in contacts {
                // The contact's own entry (Lua table keys come in any order) has subscription "both".
                let entry = roster.components(separatedBy: "[\"user\(contact)@load.test\"] = {").dropFirst().first?
                    .components(separatedBy: "\n\t};").first
                #expect(entry?.contains("[\"subscription\"] = \"both\";") == true, "user\(user) roster:\n\(roster)")
            }
            #expect(!roster.contains("\"none\"") && !roster.contains("\"to\"") && !roster.contains("\"from\""), "user\(user) roster:\n\(roster)")
        }
        // A wrong password on existing accounts fails visibly.
        let wrong = try CommandLineTests.xmppload(arguments.map { $0 == "pw" ? "other" : $0 })
        #expect(wrong.status == 1)
        #expect(wrong.output.contains("sasl-not-authorized 25"), "\(wrong.output)")
    }
}
