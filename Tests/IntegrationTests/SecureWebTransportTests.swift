import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// `wss://` and `https://` against a real Prosody on loopback: scripts/local-server serves WebSocket and
/// BOSH also over direct TLS on a third free port, with a self-signed certificate made at `up` (for the
/// domain and 127.0.0.1). With `--insecure` sessions log in, chat and log out as over ws/http; without
/// it they fail with the typed certificate error whose hint names `--insecure`, and the run still
/// writes its results. Bytes are counted below TLS (`WireByteCounter` sits under the TLS handler), so
/// the same run shape costs more bytes on the wire over TLS: at least the server's certificate per
/// connection. Each test starts its own server and runs a bounded load that stops by itself.
@Suite(.serialized) struct SecureWebTransportTests {
    /// Log in and out only: the same bytes in every run of it on one server, but for TLS.
    static let loginLogoutProfile = """
        name: web-login
        login: {resource: web}
        steps: [login, logout]
        """

    @Test(.timeLimit(.minutes(3)))
    func sessionsLogInChatAndLogOutOverWSS() async throws {
        try await LocalServer.with(accounts: 20) { server in
            #expect(server.secureWebSocketURL.hasPrefix("wss://127.0.0.1:"), "\(server.secureWebSocketURL)")
            let (summary, out) = try await WebTransportTests.run(
                server, endpoints: [server.secureWebSocketURL], sessions: 20, name: "wss")
            defer { try? FileManager.default.removeItem(atPath: out) }
            WebTransportTests.expectCleanChat(summary, sessions: 20)
            // TLS is the transport's, under HTTP: no STARTTLS phase; the upgrade is still a phase.
            #expect(summary.latencyMilliseconds["login.tls"] == nil)
            #expect(summary.latencyMilliseconds["login.ws_upgrade"]?.count == 20)
            let transports = try #require(summary.transports)
            #expect(transports.webSocket == 20 && transports.tcp == 0 && transports.bosh == 0)
            #expect(transports.httpRequests == 20 && transports.httpResponses == 20)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func sessionsLogInChatAndLogOutOverHTTPS() async throws {
        try await LocalServer.with(accounts: 20) { server in
            #expect(server.secureBOSHURL.hasPrefix("https://127.0.0.1:"), "\(server.secureBOSHURL)")
            let (summary, out) = try await WebTransportTests.run(
                server, endpoints: [server.secureBOSHURL], sessions: 20, name: "https")
            defer { try? FileManager.default.removeItem(atPath: out) }
            WebTransportTests.expectCleanChat(summary, sessions: 20)
            #expect(summary.latencyMilliseconds["login.tls"] == nil)
            let transports = try #require(summary.transports)
            #expect(transports.bosh == 20 && transports.tcp == 0 && transports.webSocket == 0)
            // Every request answered, the long poll held at logout included.
            #expect(transports.httpRequests == transports.httpResponses, "\(transports)")
            #expect(transports.httpRequests >= 20 * 6, "\(transports)")
            #expect(summary.latencyMilliseconds["bosh.request"] != nil && summary.latencyMilliseconds["bosh.poll"] != nil)
        }
    }

    /// Without `--insecure` the self-signed certificate fails every session over both transports with
    /// `tls-certificate-self-signed` (the URL's host, 127.0.0.1, is in the certificate: the problem
    /// is the issuer, not the name), whose hint names `--insecure`; the run still ends by itself and
    /// writes summary.json saying so.
    @Test(.timeLimit(.minutes(3)))
    func withoutInsecureTheSelfSignedCertificateFailsSessionsWithAHintNamingInsecure() async throws {
        try await LocalServer.with(accounts: 10) { server in
            let (summary, out) = try await WebTransportTests.run(
                server, endpoints: [server.secureWebSocketURL, server.secureBOSHURL], sessions: 10, name: "tls-verify",
                profile: Self.loginLogoutProfile, insecure: false, duration: .seconds(6))
            defer { try? FileManager.default.removeItem(atPath: out) }
            let kind = "tls-certificate-self-signed"
            #expect(summary.sessions.started == 10)
            #expect(summary.sessions.failed == 10 && summary.sessions.loggedIn == 0, "\(summary.sessions)")
            #expect(summary.errors == [kind: 10], "\(summary.errors)")
            let hint = try #require(ErrorHint.hint(for: kind))
            #expect(hint.contains("--insecure"))
            #expect(TextReport.render(summary).contains("hint: \(hint)"))
            let transports = try #require(summary.transports)
            #expect(transports.webSocket == 5 && transports.bosh == 5, "\(transports)")
            // No request reached the wire over a connection that never finished its handshake, and
            // none was answered: requests are counted as written, not as queued.
            #expect(transports.httpRequests == 0 && transports.httpResponses == 0, "\(transports)")
            #expect(summary.bytes.sent > 0, "the ClientHellos are on the wire")
            let written = try ResultsDirectory(path: out).readSummary()
            #expect(written.errors == [kind: 10] && written.sessions.failed == 10)
        }
    }

    /// The same login-and-logout run over ws:// and wss://, then http:// and https://, on one server:
    /// the XMPP and HTTP bytes are the same, so the TLS runs' extra bytes are TLS's own — every
    /// connection received at least the server's certificate in its handshake and sent a
    /// ClientHello.
    @Test(.timeLimit(.minutes(4)))
    func bytesOnTheWireIncludeTLSRecordsAndHandshakes() async throws {
        try await LocalServer.with(accounts: 10) { server in
            let certificate = try Self.certificateDERLength(pemAt: server.certificatePath)
            #expect(certificate > 300)
            for (plain, secure) in [(server.webSocketURL, server.secureWebSocketURL), (server.boshURL, server.secureBOSHURL)] {
                var results: [RunSummary] = []
                for url in [plain, secure] {
                    let (summary, out) = try await WebTransportTests.run(
                        server, endpoints: [url], sessions: 10, name: "bytes", profile: Self.loginLogoutProfile,
                        duration: .seconds(5))
                    try? FileManager.default.removeItem(atPath: out)
                    #expect(summary.sessions.completed == 10 && summary.errors.isEmpty, "\(url): \(summary.sessions) \(summary.errors)")
                    results.append(summary)
                }
                let (overPlain, overTLS) = (results[0], results[1])
                let transports = try #require(overTLS.transports)
                let connections = transports.webSocket + transports.bosh
                #expect(connections >= 10)
                print(
                    "bytes \(plain) → \(secure): received \(overPlain.bytes.received) → \(overTLS.bytes.received), sent \(overPlain.bytes.sent) → \(overTLS.bytes.sent), certificate \(certificate) B"
                )
                #expect(overTLS.bytes.received >= overPlain.bytes.received + 10 * UInt64(certificate), "\(secure)")
                #expect(overTLS.bytes.sent > overPlain.bytes.sent + 10 * 100, "\(secure)")
            }
        }
    }

    /// The DER size of the first certificate in a PEM file.
    static func certificateDERLength(pemAt path: String) throws -> Int {
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: base64)).count
    }
}
