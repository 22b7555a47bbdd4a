import Foundation
import LoadResults
import Testing

/// Failure forensics and login-failure phases from real failures of real servers: a wrong password on
/// Prosody (phase `sasl`) and jabberd2 stalled at bind (phase `bind`). The results directory must hold
/// `forensics.json` with the stanzas, no password or SASL payload anywhere, and report.html its
/// "Why did these fail" section.
@Suite(.serialized) struct FailureForensicsTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-forensics-\(name)-\(UUID().uuidString.prefix(6))").path
    }

    /// Every file of a results directory, concatenated (to look for what must not be there).
    static func everything(in directory: String) throws -> String {
        var text = ""
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.hasPrefix(".") {
            text += (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? ""
        }
        return text
    }

    @Test(.timeLimit(.minutes(3)))
    func aWrongPasswordOnProsodyIsExplainedWithoutThePassword() throws {
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let out = Self.temporary("wrong-password")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let wrong = "Wr0ng-Pa55word"
        let result = try CommandLineTests.xmppload([
            "run", "profiles/login.yaml", "--server", "127.0.0.1:\(server.port)", "--domain", server.domain,
            "--accounts", "1-5", "--password", wrong, "--sessions", "5", "--ramp", "1s", "--tls", "none", "--sasl", "PLAIN",
            "--out", out, "--interval", "1s",
        ])
        #expect(result.status == 1, "no session logged in: exit 1\n\(result.output)")
        #expect(result.output.contains("login failures by phase  sasl 5"), "\(result.output)")
        #expect(result.output.contains("wrong password or account missing"), "\(result.output)")

        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.loginFailuresByPhase == ["sasl": 5])
        #expect(summary.loginFailures == ["sasl": ["sasl-not-authorized": 5]])
        let file = try ResultsDirectory(path: out).readForensics()
        let sessions = try #require(file.kinds.kinds["sasl-not-authorized"])
        #expect(sessions.count == FailureForensics.sessionsPerKind)
        for session in sessions {
            #expect(session.phase == "sasl")
            let texts = session.stanzas.map(\.text)
            #expect(texts.contains { $0.hasPrefix("<auth") && $0.contains("[redacted]") }, "\(texts)")
            #expect(texts.contains { $0.contains("<not-authorized/>") }, "\(texts)")
            #expect(session.stanzas.first?.text == "connected")
        }
        // The password, and the PLAIN payload of any account, are in no file of the results.
        let all = try Self.everything(in: out)
        #expect(!all.contains(wrong))
        for account in 1...5 {
            let plain = Data("\u{0}user\(account)\u{0}\(wrong)".utf8).base64EncodedString()
            #expect(!all.contains(plain))
        }
        let html = try String(contentsOfFile: "\(out)/report.html", encoding: .utf8)
        #expect(html.contains("Why did these fail"))
        #expect(html.contains("<h3>sasl-not-authorized</h3>"))
        #expect(html.contains("Login failures by phase"))
    }

    /// jabberd2's c2s authenticates on its own, but a resource bind needs its session manager: with the
    /// sm stopped (SIGSTOP) every login stalls at bind, as it does on a stream that has just registered.
    @Test(.timeLimit(.minutes(4)))
    func aJabberd2BindStallNamesThePhaseBind() async throws {
        try await Jabberd2Server.with(accounts: 10, muc: false) { server in
            let profile = Self.temporary("bind-stall") + ".yaml"
            defer { try? FileManager.default.removeItem(atPath: profile) }
            try """
            name: bind-stall
            login: {sasl: PLAIN, tls: none, resource: r1}
            step_timeout: 4s
            steps:
              - login
              - logout
            """.write(toFile: profile, atomically: true, encoding: .utf8)
            let smPID = try #require(
                pid_t(try String(contentsOfFile: "\(server.directory)/pids/sm.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(smPID, SIGSTOP) == 0)
            defer { kill(smPID, SIGCONT) }
            let out = Self.temporary("bind")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let result = try CommandLineTests.xmppload([
                "run", profile, "--server", "\(server.host):\(server.port)", "--domain", server.domain,
                "--accounts", "1-3", "--password", server.password, "--sessions", "3", "--ramp", "1s",
                "--insecure", "--plain", "--out", out, "--interval", "1s",
            ])
            kill(smPID, SIGCONT)
            #expect(result.status == 1, "\(result.output)")
            #expect(result.output.contains("login failures by phase  bind 3"), "\(result.output)")
            #expect(result.output.contains("log in on a fresh stream"), "\(result.output)")
            let summary = try ResultsDirectory(path: out).readSummary()
            #expect(summary.loginFailuresByPhase == ["bind": 3])
            #expect(summary.errors == ["timeout-login": 3])
            // The phases it did complete are measured.
            #expect(summary.latencyMilliseconds["login.sasl"]?.count == 3)
            #expect(summary.latencyMilliseconds["login.bind"] == nil)
            let sessions = try #require(try ResultsDirectory(path: out).readForensics().kinds.kinds["timeout-login"])
            #expect(sessions.count == 3)
            for session in sessions {
                #expect(session.phase == "bind")
                #expect(session.detail?.hasPrefix("stuck at bind") == true)
                let texts = session.stanzas.map(\.text)
                #expect(texts.contains { $0.contains("urn:ietf:params:xml:ns:xmpp-bind") && $0.hasPrefix("<iq") }, "\(texts)")
                #expect(texts.last == "timeout fired", "\(texts)")
                #expect(!texts.joined().contains(server.password))
            }
            let html = try String(contentsOfFile: "\(out)/report.html", encoding: .utf8)
            #expect(html.contains("Why did these fail"))
        }
    }
}
