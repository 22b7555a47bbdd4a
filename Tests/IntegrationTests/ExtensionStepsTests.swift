import Foundation
import LoadResults
import Testing

/// The extension steps (carbons, CSI, MAM, PEP) through `profiles/modern-client.yaml` against a real
/// Prosody: with its extension modules loaded every step is measured and nothing is said; without
/// them (PEP stays: vcard_legacy loads it) those steps complete unmeasured, each kind is said, and no
/// session fails. (ejabberd and jabberd2 run the same profile in their shipped-profiles suites.)
@Suite(.serialized) struct ExtensionStepsTests {
    static func run(_ server: LocalServer, out: String) throws -> (status: Int32, output: String, summary: [String: Any]) {
        let result = try CommandLineTests.xmppload([
            "run", "profiles/modern-client.yaml", "--server", "\(server.host):\(server.port)", "--domain", server.domain,
            "--accounts", "1-10", "--password", server.password, "--sessions", "10", "--ramp", "2s", "--duration", "14s",
            "--insecure", "--plain", "--out", out,
        ])
        return (result.status, result.output, try Jabberd2InteropTests.summary(out))
    }

    @Test(.timeLimit(.minutes(3)))
    func withProsodysModulesEveryStepIsMeasured() async throws {
        try await LocalServer.with(accounts: 10, options: ["--extensions"]) { server in
            let out = Jabberd2InteropTests.temporary("extensions")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let (status, output, summary) = try Self.run(server, out: out)
            #expect(status == 0, "\(output)")
            let latency = try #require(summary["latency_ms"] as? [String: Any])
            for metric in ["carbons.enable", "mam.query", "pep.publish"] {
                #expect((latency[metric] as? [String: Any])?["count"] as? Int == 10, "\(metric): \(latency.keys.sorted())")
            }
            // The sessions advertise `+notify` (XEP-0115) and answer Prosody's disco#info: each one's own
            // notification comes back and is timed.
            #expect(((latency["pep.notify"] as? [String: Any])?["count"] as? Int ?? 0) >= 10, "\(latency.keys.sorted())")
            #expect(summary["notices"] == nil || (summary["notices"] as? [Any])?.isEmpty == true, "\(output)")
            // Each MAM page brought the messages the session sent and received before it.
            #expect(try Jabberd2InteropTests.intervalCounter(out, "mam_messages") > 0)
            #expect(try Jabberd2InteropTests.intervalCounter(out, "csi_unsupported") == 0, "CSI is offered")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func withoutThemEachIsSaidAndNoSessionFails() async throws {
        try await LocalServer.with(accounts: 10) { server in
            let out = Jabberd2InteropTests.temporary("no-extensions")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let (status, output, summary) = try Self.run(server, out: out)
            #expect(status == 0, "\(output)")
            let sessions = try #require(summary["sessions"] as? [String: Any])
            #expect(sessions["completed"] as? Int == 10 && sessions["failed"] as? Int == 0, "\(output)")
            let notices = (summary["notices"] as? [[String: Any]]) ?? []
            // PEP stays: the default config's vcard_legacy module loads mod_pep.
            #expect(!notices.contains { $0["kind"] as? String == "pep-unsupported" }, "\(notices)")
            for kind in ["carbons-unsupported", "csi-unsupported", "mam-unsupported"] {
                // csi runs twice per session (inactive, active).
                let expected = kind == "csi-unsupported" ? 20 : 10
                #expect(notices.contains { $0["kind"] as? String == kind && $0["count"] as? Int == expected }, "\(kind): \(notices)")
                #expect(output.contains("\(kind) ×\(expected)"), "\(output)")
            }
            let latency = try #require(summary["latency_ms"] as? [String: Any])
            #expect(latency["mam.query"] == nil && latency["carbons.enable"] == nil, "\(latency.keys.sorted())")
            #expect((latency["pep.publish"] as? [String: Any])?["count"] as? Int == 10)
        }
    }

    /// XEP-0191 against Prosody with `mod_blocklist` (`--extensions`) and without it: with it every
    /// block, list and unblock is timed and the list's items counted; without it each step completes
    /// unmeasured, `blocking-unsupported` is said and no session fails.
    @Test(.timeLimit(.minutes(3)), arguments: [true, false])
    func blockingIsTimedWhereTheServerHasItAndSaidWhereNot(loaded: Bool) async throws {
        let profile = Jabberd2InteropTests.temporary("blocking-profile") + ".yaml"
        try """
        name: blocking
        steps:
          - login
          - presence: available
          - blocklist
          - block: 'user${next_index}@${domain}'
          - blocklist
          - unblock: 'user${next_index}@${domain}'
          - logout
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        try await LocalServer.with(accounts: 10, options: loaded ? ["--extensions"] : []) { server in
            let out = Jabberd2InteropTests.temporary("blocking")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let result = try CommandLineTests.xmppload([
                "run", profile, "--server", "\(server.host):\(server.port)", "--domain", server.domain, "--accounts", "1-10",
                "--password", server.password, "--sessions", "10", "--ramp", "1s", "--insecure", "--plain", "--out", out,
            ])
            #expect(result.status == 0, "\(result.output)")
            let summary = try Jabberd2InteropTests.summary(out)
            let sessions = try #require(summary["sessions"] as? [String: Any])
            #expect(sessions["completed"] as? Int == 10 && sessions["failed"] as? Int == 0, "\(result.output)")
            let latency = try #require(summary["latency_ms"] as? [String: Any])
            let notices = (summary["notices"] as? [[String: Any]]) ?? []
            if loaded {
                for metric in ["blocking.block", "blocking.unblock"] {
                    #expect((latency[metric] as? [String: Any])?["count"] as? Int == 10, "\(metric): \(latency.keys.sorted())")
                }
                #expect((latency["blocking.list"] as? [String: Any])?["count"] as? Int == 20)
                // The second list of each session holds the JID it blocked.
                #expect(try Jabberd2InteropTests.intervalCounter(out, "blocklist_items") >= 10)
                #expect(!notices.contains { $0["kind"] as? String == "blocking-unsupported" }, "\(notices)")
            } else {
                #expect(latency["blocking.block"] == nil && latency["blocking.list"] == nil, "\(latency.keys.sorted())")
                #expect(notices.contains { $0["kind"] as? String == "blocking-unsupported" && $0["count"] as? Int == 40 }, "\(notices)")
                #expect(result.output.contains("blocking-unsupported ×40"), "\(result.output)")
            }
        }
    }
}
