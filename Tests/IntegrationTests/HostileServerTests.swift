import Foundation
import LoadResults
import Synchronization
import Testing

/// xmppload (the CLI binary) against `scripts/hostile-server.py`, one misbehaviour per case, 20
/// sessions each: it never crashes, always writes summary.json, ends each hostile session with the
/// typed error, leaves the other sessions of a mixed case unaffected, and stays within the stated
/// bounds (issue 43) — peak RSS at most `perSessionBound` a session over the peak of the same run
/// against a well-behaved server (`baselineRSS`, measured once per suite: the process's own cost),
/// and max loop lag at most `loopLagBoundMilliseconds`, in the debug build the tests run. (The
/// unbounded behaviour measured 2.4 GiB and 22 s; a server that floods pings and never reads, 179 MiB
/// and 220-500 ms before issue 43: `scripts/hostile-table` prints the figures per case.)
@Suite(.serialized) struct HostileServerTests {
    static let sessions = 20
    /// Memory a hostile session may cost beyond a well-behaved one, in bytes.
    static let perSessionBound: UInt64 = 2 << 20
    static let loopLagBoundMilliseconds = 250.0

    /// The peak RSS of the same command against a well-behaved server (`normal`, login.yaml, 20
    /// sessions), measured once.
    static let baseline = Mutex<UInt64?>(nil)

    static func baselineRSS() throws -> UInt64 {
        if let known = baseline.withLock({ $0 }) { return known }
        let server = try HostileServer.start("normal")
        defer { server.stop() }
        let (status, output, summary, _) = try run(server, tls: "none")
        #expect(status == 0, "the well-behaved server's run: \(output)")
        let peak = summary.generator.peakRSSBytes
        baseline.withLock { $0 = peak }
        return peak
    }

    /// The hostile server, stopped by PID.
    struct HostileServer {
        let child: ChildProcess
        let port: Int

        static func start(_ name: String, every: Int = 1, password: String = "secret") throws -> HostileServer {
            let script = LocalServer.repositoryRoot.appendingPathComponent("scripts/hostile-server.py").path
            let child = try ChildProcess.spawn(
                "/usr/bin/python3", [script, name, "--port", "0", "--every", "\(every)", "--password", password])
            for _ in 0..<200 {
                if let line = child.output.split(separator: "\n").first(where: { $0.hasPrefix("port ") }),
                    let port = Int(line.dropFirst(5))
                {
                    return HostileServer(child: child, port: port)
                }
                usleep(50_000)
            }
            kill(child.pid, SIGKILL)
            _ = child.wait(timeout: 5)
            throw ChildProcessError(message: "hostile server did not start:\n\(child.output)")
        }

        func stop() {
            kill(child.pid, SIGTERM)
            _ = child.wait(timeout: 5)
            child.removeLog()
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// The error every hostile session must end with.
        let kind: String
        /// Every `every`-th connection is hostile; the rest must log in and complete.
        var every = 1
        /// `--tls none` unless the case is about TLS.
        var tls = "none"
        var testDescription: String { every > 1 ? "\(name) (1 in \(every))" : name }
    }

    static let cases: [Case] = [
        Case(name: "ns-flood", kind: "xml-limit-attributes"),
        Case(name: "ns-many", kind: "xml-limit-namespaces"),
        Case(name: "attrs-header", kind: "xml-limit-attributes"),
        Case(name: "attrs-stanza", kind: "xml-limit-attributes"),
        Case(name: "deep", kind: "xml-limit-depth"),
        Case(name: "deep", kind: "xml-limit-depth", every: 2),
        Case(name: "big", kind: "xml-limit-element-size"),
        Case(name: "dtd", kind: "xml-restricted"),
        Case(name: "entity-bomb", kind: "xml-restricted"),
        Case(name: "bad-utf8", kind: "xml-malformed"),
        Case(name: "scram-iterations", kind: "sasl-iteration-count"),
        Case(name: "scram-nonce", kind: "sasl-nonce"),
        Case(name: "scram-signature", kind: "sasl-server-signature"),
        Case(name: "no-starttls", kind: "tls-not-offered", tls: "starttls"),
    ]

    /// Runs `profile` against the server; returns the exit status, output and summary.
    static func run(
        _ server: HostileServer, profile: String = "profiles/login.yaml", tls: String,
        extra: [String] = []
    ) throws -> (status: Int32, output: String, summary: RunSummary, size: Int) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-hostile-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload(
            [
                "run", profile, "--server", "127.0.0.1:\(server.port)", "--domain", "load.test",
                "--accounts", "1-\(sessions)", "--password", "secret", "--sessions", "\(sessions)", "--ramp", "1s",
                "--tls", tls, "--out", out, "--interval", "1s", "--loops", "2", "--plain",
            ] + extra, timeout: 120)
        let summary = try ResultsDirectory(path: out).readSummary()
        let size = (try? FileManager.default.attributesOfItem(atPath: out + "/summary.json")[.size] as? Int) ?? 0
        return (result.status, result.output, summary, size)
    }

    /// Peak RSS within `perSessionBound` a session over the baseline, loop lag within its bound.
    static func expectBounded(_ summary: RunSummary, _ output: String, sessions: Int = sessions) throws {
        let base = try baselineRSS()
        let peak = summary.generator.peakRSSBytes
        let bound = base + UInt64(sessions) * perSessionBound
        #expect(peak > 0)
        #expect(
            peak <= bound,
            "peak RSS \(peak >> 20) MiB over the bound \(bound >> 20) MiB (baseline \(base >> 20) MiB + \(sessions) × 2 MiB)")
        #expect(
            summary.generator.maxLoopLagMilliseconds <= loopLagBoundMilliseconds,
            "max loop lag \(summary.generator.maxLoopLagMilliseconds) ms:\n\(output)")
    }

    @Test(.timeLimit(.minutes(3)), arguments: cases)
    func hostileCase(_ hostile: Case) throws {
        let server = try HostileServer.start(hostile.name, every: hostile.every)
        defer { server.stop() }
        let (status, output, summary, _) = try Self.run(server, tls: hostile.tls)
        // No crash: a normal exit, never a signal — 1 when no session could complete, 99 when some
        // failed (login.yaml carries `sessions.failed == 0`).
        #expect(status == 1 || status == 99, "status \(status):\n\(output)")
        let hostileSessions = UInt64((Self.sessions + hostile.every - 1) / hostile.every)
        #expect(summary.errors[hostile.kind] == hostileSessions, "errors \(summary.errors)\n\(output)")
        #expect(summary.sessions.failed == hostileSessions)
        // The others are unaffected: they logged in and completed.
        #expect(summary.sessions.loggedIn == UInt64(Self.sessions) - hostileSessions)
        #expect(summary.sessions.completed == UInt64(Self.sessions) - hostileSessions)
        try Self.expectBounded(summary, output)
        if hostile.name == "no-starttls" {
            #expect(!server.child.output.contains("auth-received"), "a password went out in cleartext")
        }
    }

    /// A new stanza-error condition in every reply: error kinds stay few, summary.json small.
    @Test(.timeLimit(.minutes(3)))
    func uniqueErrorConditionsStayBounded() throws {
        let pings = String(repeating: "  - {ping: load.test, on_error: continue}\n", count: 30)
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-pings-\(UUID().uuidString.prefix(6)).yaml")
        try "name: hostile-pings\nsteps:\n  - login\n\(pings)  - logout\n".write(to: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: profile) }
        let server = try HostileServer.start("unique-errors")
        defer { server.stop() }
        let (status, output, summary, size) = try Self.run(server, profile: profile.path, tls: "none")
        #expect(status == 0, "\(output)")
        #expect(summary.sessions.completed == UInt64(Self.sessions), "\(output)")
        let errorCount = summary.errors.values.reduce(0, +)
        #expect(errorCount == UInt64(Self.sessions * 30), "errors \(summary.errors)")
        #expect(summary.errors.count <= 2, "errors \(summary.errors)")
        #expect(size < 64 << 10, "summary.json is \(size) bytes")
        // The server's <text/> is kept once per kind: one printable line, cut, in the summary and report.
        let example = try #require(summary.errorExamples?["stanza-undefined-condition"], "\(summary.errorExamples ?? [:])")
        #expect(example.hasPrefix("condition "), "\(example)")
        #expect(example.contains(" <script>x"))
        #expect(example.count == ErrorExamples.maxCharacters && example.hasSuffix("…"))
        #expect(summary.errorExamples?.count == summary.errors.count)
        #expect(output.contains("    server: condition "), "\(output)")
        try Self.expectBounded(summary, output)
    }

    /// A legal stanza over the default element size ends the session; `--max-element-size` raised
    /// lets it through and the sessions complete.
    @Test(.timeLimit(.minutes(3)))
    func aRaisedElementLimitLetsALargeLegalStanzaThrough() throws {
        let server = try HostileServer.start("large")
        defer { server.stop() }
        let refused = try Self.run(server, tls: "none")
        #expect(refused.summary.errors["xml-limit-element-size"] == UInt64(Self.sessions), "\(refused.output)")
        #expect(refused.output.contains("hint: a stanza or stream header was larger than --max-element-size"))
        let raised = try Self.run(server, tls: "none", extra: ["--max-element-size", "1MiB"])
        #expect(raised.status == 0, "\(raised.output)")
        #expect(raised.summary.errors.isEmpty, "\(raised.summary.errors)")
        #expect(raised.summary.sessions.completed == UInt64(Self.sessions))
        try Self.expectBounded(raised.summary, raised.output)
    }

    /// Prosody with its self-signed certificate and no --insecure: every session fails with the
    /// reason in its kind, no reconnect storm, and the report names --insecure.
    @Test(.timeLimit(.minutes(3)))
    func aSelfSignedCertificateSaysWhyAndNamesInsecure() throws {
        let server = try LocalServer.start(accounts: 4)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-tls-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload(
            [
                "run", "profiles/login.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", "load.test",
                "--accounts", "1-4", "--password", "secret", "--sessions", "4", "--ramp", "1s",
                "--tls", "starttls", "--out", out, "--interval", "1s", "--plain",
            ], timeout: 120)
        #expect(result.status == 1, "no session logged in: \(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.errors == ["tls-certificate-self-signed": 4], "\(summary.errors)\n\(result.output)")
        #expect(result.output.contains("use --insecure for a lab server"), "\(result.output)")
        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        #expect(html.contains("use --insecure for a lab server"))
    }

    /// The server floods pings and never reads the answers: the session answers until its socket
    /// is full (the kernel's 128 KiB send buffer, `LoopBootstraps.sendBufferBytes`), then stops
    /// reading while the socket does not drain, and ends `write-stalled` after --write-stall. All 20
    /// within the memory and loop-lag bounds, each with the typed error.
    @Test(.timeLimit(.minutes(3)))
    func aServerThatFloodsPingsAndNeverReadsIsThrottledAndEnded() throws {
        let server = try HostileServer.start("no-read")
        defer { server.stop() }
        let (status, output, summary, _) = try Self.run(
            server, profile: "profiles/idle.yaml", tls: "none", extra: ["--duration", "60s", "--write-stall", "2s"])
        // 1: no session completed (idle.yaml carries `sessions.failed == 0`; all 20 failed).
        #expect(status == 1, "status \(status):\n\(output)")
        #expect(summary.errors == ["write-stalled": UInt64(Self.sessions)], "errors \(summary.errors)\n\(output)")
        #expect(summary.sessions.loggedIn == UInt64(Self.sessions) && summary.sessions.failed == UInt64(Self.sessions))
        // Ended by the stall, long before the 60 s of load.
        #expect(summary.durationSeconds < 40, "\(summary.durationSeconds) s:\n\(output)")
        // The console's errors table lists what the verdict counts.
        #expect(output.contains("errors\n  write-stalled                   20"), "\(output)")
        #expect(output.contains("(write-stalled ×20)"), "\(output)")
        try Self.expectBounded(summary, output)
    }

    // MARK: - Modern login (issue 40): SASL2, Bind2, FAST and channel binding, as runs meet them

    /// A password no other text contains, so finding it (or its base64) anywhere is a leak.
    static let modernPassword = "Hostile-Pa55word-40"

    struct ModernCase: Sendable, CustomTestStringConvertible {
        let name: String
        /// The error every session must end with, and the login phase it fails in.
        let kind: String
        let phase: String
        let tls: String
        let login: String
        var testDescription: String { name }
    }

    static let modernCases: [ModernCase] = [
        // PLAIN's one message carries the Bind2 request: its wait is the bind phase.
        ModernCase(name: "sasl2-continue", kind: "sasl2-continue", phase: "bind", tls: "none", login: "sasl2"),
        ModernCase(name: "tls-cb-mismatch", kind: "sasl-server-signature", phase: "sasl", tls: "direct", login: "auto"),
        // Found in the features: types advertised, no -PLUS offered.
        ModernCase(name: "tls-downgrade", kind: "sasl-downgrade", phase: "features", tls: "direct", login: "auto"),
        ModernCase(name: "tls-downgrade-hash", kind: "sasl-downgrade", phase: "sasl", tls: "direct", login: "auto"),
    ]

    /// Runs `profile` with the modern password and keeps the results directory for `body`, then removes it.
    static func runModern<T>(
        _ server: HostileServer, profile: String = "profiles/login.yaml", tls: String, login: String, extra: [String] = [],
        _ body: (_ status: Int32, _ output: String, _ summary: RunSummary, _ directory: String) throws -> T
    ) throws -> T {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-hostile-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload(
            [
                "run", profile, "--server", "127.0.0.1:\(server.port)", "--domain", "load.test", "--accounts", "1-\(sessions)",
                "--password", modernPassword, "--sessions", "\(sessions)", "--ramp", "1s", "--tls", tls, "--login", login, "--insecure",
                "--out", out, "--interval", "1s", "--loops", "2", "--plain",
            ] + extra, timeout: 120)
        return try body(result.status, result.output, try ResultsDirectory(path: out).readSummary(), out)
    }

    /// No secret in the run's output nor in any file it wrote (summary, intervals, manifest,
    /// forensics, report): neither the password, its base64 (PLAIN's payload), nor any of `secrets`.
    static func expectNoSecrets(_ output: String, directory: String, secrets: [String] = []) throws {
        let base64 = [Data("\0user1\0\(modernPassword)".utf8).base64EncodedString(), Data(modernPassword.utf8).base64EncodedString()]
        let needles = [modernPassword] + base64 + secrets
        var texts = [("output", output)]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
            texts.append((file, (try? String(contentsOfFile: directory + "/" + file, encoding: .utf8)) ?? ""))
        }
        #expect(texts.contains { $0.0 == "summary.json" })
        for (name, text) in texts {
            for needle in needles { #expect(!text.contains(needle), "\(name) holds a secret (\(needle.prefix(6))…)") }
        }
    }

    /// Each modern-login misbehaviour ends every session with its typed error in the right phase,
    /// within bounded time and memory, and leaks no password into output, forensics or results.
    @Test(.timeLimit(.minutes(2)), arguments: modernCases)
    func modernLoginCase(_ hostile: ModernCase) throws {
        let server = try HostileServer.start(hostile.name, password: Self.modernPassword)
        defer { server.stop() }
        let started = ContinuousClock.now
        try Self.runModern(server, tls: hostile.tls, login: hostile.login) { status, output, summary, directory in
            #expect(status == 1, "no session completed: \(output)")
            #expect(summary.errors == [hostile.kind: UInt64(Self.sessions)], "\(summary.errors)\n\(output)")
            #expect(summary.loginFailuresByPhase == [hostile.phase: UInt64(Self.sessions)], "\(String(describing: summary.loginFailuresByPhase))")
            #expect(summary.loginPaths == nil, "no login succeeded")
            try Self.expectBounded(summary, output)
            let forensics = try String(contentsOfFile: directory + "/forensics.json", encoding: .utf8)
            #expect(forensics.contains(hostile.kind))
            try Self.expectNoSecrets(output, directory: directory)
        }
        #expect(ContinuousClock.now - started < .seconds(60), "a typed error comes at once, not at a timeout")
    }

    /// A Bind2 answer that never comes: the login times out in `bind` (the phase that waits for
    /// `<success/>` when it carries the bind), at the login step's timeout, not later.
    @Test(.timeLimit(.minutes(2)))
    func aBind2AnswerThatNeverComesTimesOutInBind() throws {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-bind2-\(UUID().uuidString.prefix(6)).yaml")
        try "name: bind2-silence\nsteps:\n  - {login: {}, timeout: 3s}\n  - logout\n".write(to: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: profile) }
        let server = try HostileServer.start("bind2-silence", password: Self.modernPassword)
        defer { server.stop() }
        let started = ContinuousClock.now
        try Self.runModern(server, profile: profile.path, tls: "none", login: "sasl2") { status, output, summary, directory in
            #expect(status == 1, "\(output)")
            #expect(summary.errors == ["timeout-login": UInt64(Self.sessions)], "\(summary.errors)")
            #expect(summary.loginFailuresByPhase == ["bind": UInt64(Self.sessions)], "\(String(describing: summary.loginFailuresByPhase))")
            try Self.expectBounded(summary, output)
            try Self.expectNoSecrets(output, directory: directory)
        }
        #expect(ContinuousClock.now - started < .seconds(45))
    }

    /// A server that issues a bogus token (plus 100 oversized ones) at every password login and refuses
    /// every FAST attempt: churned sessions try their token, fall back to the password on the same
    /// stream (counted, said as `fast-token-rejected`), and none fails; no token reaches any file.
    @Test(.timeLimit(.minutes(2)))
    func aBogusTokenFloodFallsBackCountedAndLeaksNoToken() throws {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-fast-\(UUID().uuidString.prefix(6)).yaml")
        try "name: fast-flood\nsteps:\n  - login\n  - stay_online\n".write(to: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: profile) }
        let server = try HostileServer.start("fast-flood", password: Self.modernPassword)
        defer { server.stop() }
        try Self.runModern(
            server, profile: profile.path, tls: "none", login: "sasl2", extra: ["--duration", "8s", "--churn", "8/s"]
        ) { status, output, summary, directory in
            #expect(status == 0, "\(output)")
            #expect(summary.sessions.failed == 0 && summary.errors.isEmpty, "\(summary.errors)\n\(output)")
            let churned = summary.sessions.churned ?? 0
            #expect(churned >= 10, "\(output)")
            let rejected = summary.notices?.first { $0.kind == "fast-token-rejected" }
            #expect((rejected?.count ?? 0) >= 5, "\(String(describing: summary.notices))")
            let paths = summary.loginPaths ?? [:]
            #expect(paths["fast"] == nil, "every token was refused: \(paths.keys)")
            #expect((paths["sasl2-bind2"]?.reconnects ?? 0) >= 5, "the fallback logins")
            #expect((paths["sasl2-bind2"]?.roundTrips.distribution["3"] ?? 0) >= 5, "header, the refused token, the password")
            try Self.expectBounded(summary, output)
            try Self.expectNoSecrets(output, directory: directory, secrets: ["bogus-", String(repeating: "x", count: 64)])
        }
        #expect(server.child.output.contains("sasl2-received HT-SHA-256-NONE"), "tokens were tried")
    }
}
