import Foundation
import LoadEngine
import ServerProbe
import Testing
import XMPPCore

/// `xmppload probe` against real servers on loopback: a private Prosody (echoes presence, answers
/// pings) through the binary (text, `--json`, exit codes), and a private jabberd2 with `--no-ping`
/// (no presence echo, pings answered `<feature-not-implemented/>`, only a pre-standard XEP-0198
/// namespace) through `ServerProbe`. Each server is stopped by PID when its test ends.
@Suite(.serialized) struct ProbeIntegrationTests {
    static func passwordFile(_ password: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-probe-pw-\(UUID().uuidString.prefix(8))").path
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(.timeLimit(.minutes(3)))
    func prosodyEchoesPresenceAndAnswersPings() async throws {
        try await LocalServer.with(accounts: 3) { server in
            let passwordFile = try Self.passwordFile(server.password)
            let json = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-probe-\(UUID().uuidString.prefix(8)).json").path
            defer {
                try? FileManager.default.removeItem(atPath: passwordFile)
                try? FileManager.default.removeItem(atPath: json)
            }
            let address = "\(server.host):\(server.port)"
            let result = try CommandLineTests.xmppload(
                [
                    "probe", "--server", address, "--domain", server.domain, "--account", "user1", "--password-file", passwordFile, "--insecure",
                    "--json", json,
                ],
                timeout: 60)
            #expect(result.status == 0, "\(result.output)")
            for expected in [
                "logged in as user1@\(server.domain)/", "initial presence: echoed after", "ping (XEP-0199): result",
                "presence is echoed", "registration open: `xmppload provision` can create accounts",
                "MUC service conference.\(server.domain)",
            ] {
                #expect(result.output.contains(expected), "missing '\(expected)' in:\n\(result.output)")
            }
            let report = try JSONDecoder().decode(ProbeReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            #expect(report.failure == nil)
            #expect(report.presence?.echoed == true)
            #expect(report.ping?.answer == .result)
            #expect(report.sasl?.offered.contains("SCRAM-SHA-1") == true)
            #expect(report.sasl?.used != nil)
            #expect(report.registration?.offered == true)
            #expect(report.discoItems?.mucService == "conference.\(server.domain)")
            #expect(report.discoInfo?.identities.contains { $0.category == "server" } == true)
            #expect(report.software?.name == "Prosody")
            #expect(report.tls?.version != nil && report.tls?.certificate != nil)
            // The lab certificate is self-signed: --insecure let the probe through, and it says so.
            #expect(report.tls?.verification == "failed" && report.tls?.problem == "self-signed", "\(String(describing: report.tls))")
            // Prosody answers in whole seconds; samples spread over its second narrow the offset.
            let clock = try #require(report.entityTime?.clock)
            #expect(clock.samples == 5 && clock.uncertaintyMilliseconds < 400, "\(clock)")
            #expect(report.login?.phases.map(\.phase).contains("bind") == true)
            #expect(report.streamFeatures.map(\.stage) == [.initial, .afterTLS, .afterSASL])
            #expect(report.implications == report.impliedSettings())

            // A wrong password: exit 1, the phase, the kind and what to do.
            let wrong = try Self.passwordFile("not-the-password")
            defer { try? FileManager.default.removeItem(atPath: wrong) }
            let failed = try CommandLineTests.xmppload(
                ["probe", "--server", address, "--domain", server.domain, "--account", "user1", "--password-file", wrong, "--insecure"], timeout: 60)
            #expect(failed.status == 1, "\(failed.output)")
            #expect(failed.output.contains("FAILED at sasl: sasl-not-authorized"), "\(failed.output)")
            #expect(failed.output.contains("hint: wrong password"), "\(failed.output)")

            // Without --insecure the self-signed certificate ends the probe at tls, diagnosed.
            let strict = try CommandLineTests.xmppload(["probe", "--server", address, "--domain", server.domain], timeout: 60)
            #expect(strict.status == 1, "\(strict.output)")
            #expect(strict.output.contains("FAILED at tls: tls-certificate-self-signed"), "\(strict.output)")

            // Without an account: features, TLS, SASL and registration, nothing after SASL.
            let anonymous = await ServerProbe.run(.init(host: server.host, port: server.port, domain: server.domain, insecure: true))
            #expect(anonymous.failure == nil, "\(anonymous.text())")
            #expect(anonymous.login == nil && anonymous.presence == nil)
            #expect(anonymous.sasl?.supported.isEmpty == false)
            #expect(anonymous.registration?.form?.answer == .result)
            #expect(anonymous.registration?.fields?.contains("username") == true)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func jabberd2DoesNotEchoAndAnswersPingsWithAnError() async throws {
        try await Jabberd2Server.with(accounts: 2, pings: false) { server in
            let report = await ServerProbe.run(
                .init(host: server.host, port: server.port, domain: server.domain, username: "user1", password: server.password, insecure: true))
            #expect(report.failure == nil, "\(report.text())")
            let text = report.text()
            #expect(report.presence?.echoed == false)
            #expect(report.ping?.answer == .error)
            #expect(report.ping?.condition == "feature-not-implemented")
            #expect(report.sasl?.offered.contains("DIGEST-MD5") == true)
            #expect(report.sasl?.unsupported.contains("DIGEST-MD5") == true)
            #expect(report.sasl?.supported.contains("SCRAM-SHA-1") == true)
            #expect(report.streamManagement == ["http://www.xmpp.org/extensions/xep-0198.html#ns"], "\(report.text())")
            #expect(text.contains("stream_management: server offers only http://www.xmpp.org/extensions/xep-0198.html#ns — not used"), "\(text)")
            #expect(report.discoItems?.mucService == server.mucService, "\(report.text())")
            #expect(text.contains("presence is not echoed: the presence step completes after its bounded wait (2 s)"), "\(text)")
            #expect(text.contains("pings answered with an error (feature-not-implemented): keep-alive falls back to whitespace"), "\(text)")
        }
    }
}
