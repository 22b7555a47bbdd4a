import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `run`'s verdict as a user sees it: exit codes 0 / 99 / 1, thresholds in summary.json and both
/// reports, `--abort-on-fail`, and `check` validating thresholds.
@Suite(.serialized) struct VerdictCommandTests {
    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-\(name)-\(UUID().uuidString.prefix(6))").path
    }

    /// A loopback port nothing listens on: bound to pick a free one, then closed.
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        guard bound == 0 else { throw ChildProcessError(message: "cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(.timeLimit(.minutes(2)))
    func aRunAgainstNothingListeningExitsOneWithOneLineSayingWhy() throws {
        let out = Self.temporaryPath("unreachable")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let port = try Self.unusedPort()
        let result = try CommandLineTests.xmppload(
            [
                "run", "profiles/login.yaml", "--server", "127.0.0.1:\(port)",
                "--domain", "load.test", "--password", "unused", "--sessions", "5", "--ramp", "1s",
                "--tls", "none", "--out", out, "--interval", "1s",
            ], timeout: 90)
        #expect(result.status == 1, "\(result.output)")
        let reasons = result.output.split(separator: "\n").filter { $0.hasPrefix("xmppload: ") }
        #expect(reasons.count == 1, "\(result.output)")
        #expect(
            reasons.first?.hasPrefix("xmppload: the server was unreachable: none of 5 sessions could connect (connect-refused ×") == true,
            "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.stopReason == "server-unreachable")
        #expect(summary.verdict?.kind == .serverUnreachable)
        #expect(try ResultsDirectory(path: out).readManifest().stopReason == "server-unreachable")
    }

    @Test(.timeLimit(.minutes(3)))
    func thresholdsThatPassExitZeroAndOneThatFailsExits99() throws {
        let server = try LocalServer.start(accounts: 20)
        defer { server.stop() }
        let profile = Self.temporaryPath("thresholds") + ".yaml"
        try """
        name: login-thresholds
        steps: [login, logout]
        thresholds:
          - login.count >= 20
          - errors.count == 0
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let common = [
            "--server", "127.0.0.1:\(server.port)", "--domain", server.domain, "--accounts", "1-20",
            "--password", server.password, "--sessions", "20", "--ramp", "2s", "--insecure", "--interval", "1s",
        ]

        let passing = Self.temporaryPath("pass")
        defer { try? FileManager.default.removeItem(atPath: passing) }
        let pass = try CommandLineTests.xmppload(["run", profile] + common + ["--out", passing, "--threshold", "sessions.failed == 0"])
        #expect(pass.status == 0, "\(pass.output)")
        #expect(pass.output.contains("thresholds: all passed"), "\(pass.output)")
        let passSummary = try ResultsDirectory(path: passing).readSummary()
        #expect(passSummary.thresholds?.map(\.threshold) == ["login.count >= 20", "errors.count == 0", "sessions.failed == 0"])
        #expect(passSummary.thresholds?.allSatisfy { $0.status == .pass } == true)
        #expect(passSummary.thresholds?.first?.value == 20)
        #expect(passSummary.stopReason == "completed" && passSummary.verdict?.kind == .ranAsPlanned)

        let failing = Self.temporaryPath("fail")
        defer { try? FileManager.default.removeItem(atPath: failing) }
        let fail = try CommandLineTests.xmppload(["run", profile] + common + ["--out", failing, "--threshold", "login.p99 < 0.001ms"])
        #expect(fail.status == 99, "\(fail.output)")
        #expect(fail.output.contains("FAIL  login.p99 < 0.001ms"), "\(fail.output)")
        let failSummary = try ResultsDirectory(path: failing).readSummary()
        let failed = try #require(failSummary.thresholds?.last)
        #expect(failed.status == .fail && (failed.value ?? 0) > 0.001)
        let html = try String(contentsOfFile: failing + "/report.html", encoding: .utf8)
        #expect(html.contains("<h2>Verdict</h2>") && html.contains("login.p99 &lt; 0.001ms"))

        // No session logs in (wrong password): exit 1 whatever the thresholds say, one line saying why.
        let refused = Self.temporaryPath("refused")
        defer { try? FileManager.default.removeItem(atPath: refused) }
        let wrong = try CommandLineTests.xmppload(
            ["run", profile] + common.map { $0 == server.password ? "not-the-password" : $0 }
                + ["--out", refused])
        #expect(wrong.status == 1, "\(wrong.output)")
        #expect(
            wrong.output.split(separator: "\n").filter { $0.hasPrefix("xmppload: ") }
                == ["xmppload: no session logged in: 20 started (sasl-not-authorized ×20)"], "\(wrong.output)")
        let refusedSummary = try ResultsDirectory(path: refused).readSummary()
        #expect(refusedSummary.stopReason == "no-session-logged-in")
    }

    @Test(.timeLimit(.minutes(2)))
    func abortOnFailStopsEarlyWithValidResults() throws {
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let out = Self.temporaryPath("abort")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let started = Date()
        let result = try CommandLineTests.xmppload(
            [
                "run", "profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-10", "--password", server.password,
                "--sessions", "10", "--ramp", "1s", "--duration", "10m", "--insecure",
                "--interval", "1s", "--warmup", "2s", "--threshold", "sessions.online > 10",
                "--abort-on-fail", "--out", out,
            ], timeout: 90)
        #expect(result.status == 99, "\(result.output)")
        #expect(Date().timeIntervalSince(started) < 90, "the 10 minute run was not cut short")
        // Ten sessions are online after the warm-up, so the rule fails at the first judged interval.
        #expect(result.output.contains("xmppload: threshold failed: FAIL  sessions.online > 10: 10"), "\(result.output)")
        let directory = ResultsDirectory(path: out)
        let summary = try directory.readSummary()
        #expect(summary.stopReason == "thresholds-failed")
        #expect(summary.verdict?.kind == .cutShort)
        #expect(summary.sessions.loggedIn == 10)
        #expect(summary.durationSeconds < 300)
        // The profile's own `sessions.failed == 0` passes; the flag's rule (last) failed.
        #expect(summary.thresholds?.last?.status == .fail && summary.thresholds?.last?.threshold == "sessions.online > 10")
        // The intervals after the warm-up exist and every line decodes.
        let intervals = try directory.readIntervals()
        #expect(intervals.contains { $0.start >= 2 })
    }

    /// Issue 25's run verdict against the real server: a profile whose sessions all log in and then
    /// fail is no "ran-as-planned" (exit 1, the failure named); a mistyped threshold and a missing
    /// password are usage errors (exit 2) before anything connects.
    @Test(.timeLimit(.minutes(3)))
    func sessionsThatAllFailAfterLoginExitOneWithTheFailureNamed() throws {
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let profile = Self.temporaryPath("fail-after-login") + ".yaml"
        // A ping to a full JID nobody has: the server answers service-unavailable and the step fails.
        try """
        name: fail-after-login
        steps:
          - login
          - ping: {to: nobody@\(server.domain)/gone}
          - logout
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let out = Self.temporaryPath("fail-after-login")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let common = [
            "--server", "127.0.0.1:\(server.port)", "--domain", server.domain, "--accounts", "1-10", "--sessions", "10",
            "--ramp", "1s", "--insecure", "--interval", "1s",
        ]
        let result = try CommandLineTests.xmppload(["run", profile] + common + ["--password", server.password, "--out", out])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("verdict: no-session-completed"), "\(result.output)")
        #expect(result.output.contains("xmppload: no session completed its profile: 10 of 10 logged in, 10 failed ("), "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.stopReason == "no-session-completed")
        #expect(summary.verdict?.work?.sessionsFailed == 10 && summary.verdict?.work?.sessionsCompleted == 0)
        #expect(summary.errorRate == 1)

        // A misspelled metric: exit 2 with a did-you-mean, nothing run.
        let typo = try CommandLineTests.xmppload(
            ["run", "profiles/login.yaml"] + common + ["--password", server.password, "--threshold", "logn.p99<500ms", "--out", out + "-typo"])
        #expect(typo.status == 2, "\(typo.output)")
        #expect(typo.output.contains("--threshold 'logn.p99<500ms': unknown metric 'logn' (did you mean 'login'?"), "\(typo.output)")
        #expect(!FileManager.default.fileExists(atPath: out + "-typo/manifest.json"))

        // No password anywhere: exit 2 naming the three ways to give one, never a guessed "secret".
        let missing = try CommandLineTests.xmppload(["run", "profiles/login.yaml"] + common + ["--out", out + "-nopw"])
        #expect(missing.status == 2, "\(missing.output)")
        #expect(missing.output.contains("no password given: use --password-file FILE, XMPPLOAD_PASSWORD or --password PW"), "\(missing.output)")
    }

    /// A minute of steady load judges no trend: too short after the ramp, said so, nothing "drifts".
    @Test(.timeLimit(.minutes(3)))
    func aOneMinuteRunMarksNoTrend() throws {
        let server = try LocalServer.start(accounts: 20)
        defer { server.stop() }
        let out = Self.temporaryPath("minute")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload([
            "run", "profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", server.domain,
            "--accounts", "1-20", "--password", server.password, "--sessions", "20", "--ramp", "10s", "--duration", "60s",
            "--insecure", "--interval", "2s", "--out", out,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("drifts"), "\(result.output)")
        #expect(result.output.contains("trends: too short to judge trends"), "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.findings?.isEmpty != false)
        #expect(summary.trendsNote?.hasPrefix("too short to judge trends") == true)
        #expect(summary.verdict?.kind == .ranAsPlanned, "\(summary.verdict?.reason ?? "")")
        #expect(summary.outages?.isEmpty != false)
    }

    @Test func checkValidatesThresholdsInTheProfileAndOnTheCommandLine() throws {
        let profile = Self.temporaryPath("check") + ".yaml"
        try """
        name: check-thresholds
        steps: [login, logout]
        thresholds:
          - login.p99 < 800ms
          - errors.rat < 1%
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try CommandLineTests.xmppload(["check", profile, "--threshold", "login.p98 < 1s", "--threshold", "messages.lost == 0"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("--threshold 'login.p98 < 1s': column 7: unknown statistic 'p98'"), "\(result.output)")
        #expect(result.output.contains("\(profile):5:5: error: threshold 'errors.rat < 1%': unknown measure 'errors.rat'"), "\(result.output)")
        #expect(result.output.contains("2 problems found"), "\(result.output)")
        let good = try CommandLineTests.xmppload(["check", "profiles/login.yaml", "--threshold", "sessions.online >= 95% over 10m"])
        #expect(good.status == 0, "\(good.output)")
        // Every threshold example in the README is valid.
        let readme = try String(contentsOf: LocalServer.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let examples = try NSRegularExpression(pattern: "--threshold '([^']+)'")
            .matches(in: readme, range: NSRange(readme.startIndex..., in: readme))
            .map { String(readme[Range($0.range(at: 1), in: readme)!]) }
        #expect(examples.count >= 4)
        let readmeCheck = try CommandLineTests.xmppload(["check", "profiles/login.yaml"] + examples.flatMap { ["--threshold", $0] })
        #expect(readmeCheck.status == 0, "\(examples): \(readmeCheck.output)")
    }

    @Test func helpStatesTheExitCodes() throws {
        let help = try CommandLineTests.xmppload(["run", "--help"])
        for line in [
            "0    the load ran and every threshold passed", "1    the run did not work", "99   a threshold failed",
            "130  interrupted", "2    usage or profile error", "--threshold <rule>", "--warmup", "--abort-on-fail",
        ] {
            #expect(help.output.contains(line), "missing '\(line)' in:\n\(help.output)")
        }
    }
}
