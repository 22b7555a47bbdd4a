import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// The `xmppload` binary against a real jabberd2 2.7 (scripts/jabberd2-server): a server that never
/// echoes initial presence, binds nothing on a stream that has just registered, and — without its
/// iq-ping module — answers pings with an error. Shipped profiles must complete on it, provisioning
/// must create accounts, and unsupported pings must be said, not counted as round trips.
@Suite(.serialized) struct Jabberd2InteropTests {
    /// summary.json of a results directory.
    static func summary(_ directory: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A counter summed over every interval of intervals.jsonl (counters not in summary.json).
    static func intervalCounter(_ directory: String, _ name: String) throws -> Int {
        let text = try String(contentsOfFile: "\(directory)/intervals.jsonl", encoding: .utf8)
        var total = 0
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            total += ((object?["counters"] as? [String: Any])?[name] as? Int) ?? 0
        }
        return total
    }

    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-jabberd2-\(name)-\(UUID().uuidString.prefix(6))").path
    }

    static func runArguments(_ server: Jabberd2Server, profile: String, sessions: Int, out: String) -> [String] {
        [
            "run", profile, "--server", "\(server.host):\(server.port)", "--domain", server.domain,
            "--accounts", "1-\(sessions)", "--password", server.password, "--sessions", String(sessions),
            "--insecure", "--plain", "--out", out,
        ]
    }

    @Test(.timeLimit(.minutes(5)))
    func loginAndChatCompleteEverySessionAndDeliverEveryMessage() async throws {
        try await Jabberd2Server.with(accounts: 40) { server in
            let login = Self.temporary("login")
            defer { try? FileManager.default.removeItem(atPath: login) }
            let first = try CommandLineTests.xmppload(Self.runArguments(server, profile: "profiles/login.yaml", sessions: 30, out: login))
            #expect(first.status == 0, "\(first.output)")
            var sessions = try #require(Self.summary(login)["sessions"] as? [String: Any])
            #expect(sessions["completed"] as? Int == 30 && sessions["failed"] as? Int == 0, "\(first.output)")
            #expect((try Self.summary(login)["errors"] as? [String: Any])?.isEmpty == true, "\(first.output)")
            // jabberd2 never echoes initial presence: said, not failed.
            #expect(try Self.intervalCounter(login, "presence_echo_missing") == 30)

            let chat = Self.temporary("chat")
            defer { try? FileManager.default.removeItem(atPath: chat) }
            let second = try CommandLineTests.xmppload(
                Self.runArguments(server, profile: "profiles/chat.yaml", sessions: 30, out: chat) + ["--duration", "15s"], timeout: 180)
            #expect(second.status == 0, "\(second.output)")
            let summary = try Self.summary(chat)
            sessions = try #require(summary["sessions"] as? [String: Any])
            #expect(sessions["completed"] as? Int == 30 && sessions["failed"] as? Int == 0, "\(second.output)")
            let messages = try #require(summary["messages"] as? [String: Any])
            let sent = try #require(messages["sent"] as? Int)
            // Every session sends its first message 1-3 s after its presence, whether echoed or not.
            #expect(sent >= 30, "\(second.output)")
            #expect(messages["received"] as? Int == sent && messages["lost"] as? Int == 0, "\(second.output)")
            #expect((summary["errors"] as? [String: Any])?.isEmpty == true, "\(second.output)")
        }
    }

    /// Every shipped profile, scaled down as ShippedProfilesTests does for Prosody (20 users over 2 s,
    /// 12 s of load; 16 s for muc), in process, against jabberd2 with its MUC component.
    @Test(.timeLimit(.minutes(7)))
    func everyShippedProfileRunsCleanly() async throws {
        try await Jabberd2Server.with(accounts: 40) { server in
            // muc.yaml sends its groupchat 10 s after joining; here its presence step first waits 2 s
            // for the echo jabberd2 never sends, so 12 s of load would end before the first send.
            _ = try await ShippedProfilesTests.runEveryProfile(
                serverName: "jabberd2", host: server.host, port: server.port, domain: server.domain, password: server.password,
                load: { .seconds($0 == "muc" ? 16 : 12) })
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func provisionRegistersThenLogsInOnAFreshStream() async throws {
        try await Jabberd2Server.with(accounts: 0) { server in
            let arguments = [
                "provision", "--server", "\(server.host):\(server.port)", "--domain", server.domain, "--accounts", "101-130",
                "--password", "pw", "--concurrency", "10", "--insecure",
            ]
            let first = try CommandLineTests.xmppload(arguments)
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("provisioned user101..130@load.test: created 30, existed 0, failed 0"), "\(first.output)")
            let again = try CommandLineTests.xmppload(arguments)
            #expect(again.status == 0 && again.output.contains("created 0, existed 30, failed 0"), "\(again.output)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func keepAlivePingsAnsweredWithAnErrorAreNoRoundTripsAndAreSaid() async throws {
        try await Jabberd2Server.with(accounts: 10, pings: false, muc: false) { server in
            #expect(!server.pingsAnswered)
            let profile = Self.temporary("ping-profile") + ".yaml"
            defer { try? FileManager.default.removeItem(atPath: profile) }
            try """
            name: idle-ping
            keepalive: {ping: 2s}
            steps: [login, {presence: available}, stay_online, logout]
            """.write(toFile: profile, atomically: true, encoding: .utf8)
            let out = Self.temporary("ping")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let result = try CommandLineTests.xmppload(Self.runArguments(server, profile: profile, sessions: 10, out: out) + ["--duration", "9s"])
            #expect(result.status == 0, "\(result.output)")
            let summary = try Self.summary(out)
            let sessions = try #require(summary["sessions"] as? [String: Any])
            #expect(sessions["completed"] as? Int == 10 && sessions["failed"] as? Int == 0, "\(result.output)")
            #expect((summary["latency_ms"] as? [String: Any])?["keepalive.ping"] == nil, "an error reply is no round trip")
            #expect(!result.output.contains("keepalive.ping"), "\(result.output)")
            // Once per session, then whitespace: no timeout-keepalive either.
            #expect(try Self.intervalCounter(out, "pings_unsupported") == 10)
            #expect((summary["errors"] as? [String: Any])?.isEmpty == true, "\(result.output)")
            // Said, not silent: a notice in summary.json and the console.
            let notices = (summary["notices"] as? [[String: Any]]) ?? []
            #expect(notices.contains { $0["kind"] as? String == "pings-unsupported" && $0["count"] as? Int == 10 }, "\(notices)")
            #expect(result.output.contains("pings-unsupported ×10"), "\(result.output)")

            // The same server runs no MUC component: muc.yaml's joins fail with a typed error whose
            // hint says the MUC service is missing and how to find the server's services.
            let mucOut = Self.temporary("no-muc")
            defer { try? FileManager.default.removeItem(atPath: mucOut) }
            let muc = try CommandLineTests.xmppload(
                Self.runArguments(server, profile: "profiles/muc.yaml", sessions: 5, out: mucOut) + ["--duration", "8s"])
            #expect(muc.status != 0, "\(muc.output)")
            let errors = try #require(try Self.summary(mucOut)["errors"] as? [String: Any], "\(muc.output)")
            let kind = try #require(errors.keys.first { $0.hasPrefix("muc-") }, "\(errors)")
            #expect(ErrorHint.hint(for: kind)?.contains("MUC service does not exist") == true, "\(kind)")
            #expect(muc.output.contains("MUC service does not exist"), "\(muc.output)")
        }
    }
}
