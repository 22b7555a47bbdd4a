import Foundation
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
import XMPPCore

@testable import LoadEngine
@testable import ServerProbe

/// The probe's modern login over its real pipeline on an `NIOAsyncTestingChannel`, against
/// conversations recorded from ejabberd 24.12: SASL2 PLAIN with Bind2 asking for a FAST token, and
/// the FAST login with that token (whose server proof is ejabberd's real HMAC, verified here).
@Suite struct ModernLoginPipelineTests {
    /// Replays `transcript` to a probe run with `options`; returns its report.
    static func replay(_ name: String, options: ServerProbe.Options) async throws -> ProbeReport {
        let transcript = try Transcript(named: name)
        let channel = NIOAsyncTestingChannel()
        let handler = try await channel.testingEventLoop.executeInContext {
            let made = ProbeChannelHandler.pipeline(tls: nil)
            try channel.pipeline.syncOperations.addHandlers(made.handlers)
            return NIOLoopBound(made.probe, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222))
        let finished = Mutex(false)
        let probe = Task {
            let report = await ServerProbe.run(options, group: nil, connection: ProbeConnection(channel: channel, handler: handler))
            finished.withLock { $0 = true }
            return report
        }
        var client = try ClientOutputChecker()
        var sentHeader: String?
        for entry in transcript.entries {
            switch entry {
            case .client(let line):
                let expected = try client.expected(line)
                var unit = try client.next()
                var silentMilliseconds = 0
                while unit == nil {
                    if let written = try await channel.readOutbound(as: ByteBuffer.self) {
                        let bytes = Array(written.readableBytesView)
                        if sentHeader == nil { sentHeader = String(decoding: bytes, as: UTF8.self) }
                        client.append(bytes)
                        unit = try client.next()
                    } else {
                        await channel.testingEventLoop.advanceTime(by: .milliseconds(100))
                        silentMilliseconds += 100
                        try #require(silentMilliseconds < 30_000, "the probe wrote nothing where the transcript has \(line)")
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                #expect(unit!.matches(expected), "sent \(unit!), transcript has \(expected)")
            case .server(let bytes):
                try await channel.writeInbound(ByteBuffer(string: bytes))
            }
        }
        #expect(sentHeader?.contains("from='user5@load.test'") == true, "SASL2 is offered only to a header that names the user")
        // Past the recording the server is silent: the probe's remaining waits run out in virtual time.
        for _ in 0..<600 where !finished.withLock({ $0 }) {
            await channel.testingEventLoop.advanceTime(by: .seconds(1))
            try await Task.sleep(for: .milliseconds(5))
        }
        return await probe.value
    }

    static func options(fastToken: FASTToken? = nil) -> ServerProbe.Options {
        var options = ServerProbe.Options(
            host: "127.0.0.1", port: 5222, domain: "load.test", username: "user5", password: "secret", tls: .none, mechanism: .plain)
        options.login = .sasl2
        options.fastToken = fastToken
        return options
    }

    @Test(.timeLimit(.minutes(1)))
    func sasl2WithBind2AndATokenFromEjabberd() async throws {
        let report = try await Self.replay("ejabberd-24.12-sasl2-plain-bind2", options: Self.options())
        #expect(report.failure == nil, "\(report.text())")
        let modern = try #require(report.modernLogin)
        #expect(modern.sasl2?.bind2 == ["urn:xmpp:sm:3", "urn:xmpp:carbons:2"])
        #expect(modern.sasl2?.fast == ["HT-SHA-256-NONE", "HT-SHA-256-UNIQ", "HT-SHA-256-EXPR", "HT-SHA-256-ENDP"])
        #expect(modern.sasl2?.streamManagementInline == true)
        #expect(modern.sasl2?.upgrades == ["UPGR-SCRAM-SHA-256", "UPGR-SCRAM-SHA-512"])
        #expect(modern.channelBindingTypes == nil, "no TLS, no XEP-0440")
        #expect(modern.plusUsable.isEmpty)
        let login = try #require(modern.login)
        #expect(login.path == "sasl2-bind2")
        #expect(login.roundTrips == 2)
        #expect(login.mechanism == "PLAIN")
        #expect(login.fastTokenExpiry == "2026-12-28T07:11:58Z")
        #expect(report.login?.jid.hasPrefix("user5@load.test/xmppload-probe.") == true)
        #expect(report.streamManagement == ["urn:xmpp:sm:2", "urn:xmpp:sm:3"], "the features after Bind2's <success/>")
        #expect(report.presence?.echoed == true)
        // The token never reaches the report, its text or its JSON.
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(!json.contains("n1cYxut5"))
        #expect(!report.text().contains("n1cYxut5"))
    }

    @Test(.timeLimit(.minutes(1)))
    func fastLoginWithEjabberdsToken() async throws {
        let token = FASTToken(mechanism: .htSHA256None, secret: "n1cYxut5XHn3RysdIk6unCWVuPuGwrd7UYhQ/G3eoYg=", expiry: "2026-12-28T07:11:58Z")
        let report = try await Self.replay("ejabberd-24.12-fast-none", options: Self.options(fastToken: token))
        #expect(report.failure == nil, "\(report.text())")
        let login = try #require(report.modernLogin?.login)
        #expect(login.path == "fast")
        #expect(login.mechanism == "HT-SHA-256-NONE")
        #expect(login.roundTrips == 2)
        #expect(login.fastTokenRejected == nil)
    }
}
