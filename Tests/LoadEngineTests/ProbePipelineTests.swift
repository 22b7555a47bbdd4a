import Foundation
import NIOCore
import NIOEmbedded
import Testing
import XMPPCore

@testable import LoadEngine
@testable import ServerProbe

/// The whole probe (login machine, queries, bounded waits) over its real pipeline on an
/// `NIOAsyncTestingChannel`, against a conversation recorded from jabberd2: what the probe writes is
/// checked unit by unit against the transcript's `C ` lines, the server's recorded bytes are
/// replayed, and virtual time moves on only while the probe waits for a server that stays silent
/// (the presence echo jabberd2 never sends).
@Suite struct ProbePipelineTests {
    @Test(.timeLimit(.minutes(1)))
    func replaysARecordedJabberd2Probe() async throws {
        let transcript = try Transcript(named: "jabberd2-2.7-probe-plain")
        let channel = NIOAsyncTestingChannel()
        let handler = try await channel.testingEventLoop.executeInContext {
            let made = ProbeChannelHandler.pipeline(tls: nil)
            try channel.pipeline.syncOperations.addHandlers(made.handlers)
            return NIOLoopBound(made.probe, eventLoop: channel.eventLoop)
        }
        let options = ServerProbe.Options(
            host: "127.0.0.1", port: 5222, domain: "load.test", username: "user1", password: "secret", tls: .none, mechanism: .plain)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222))
        let probe = Task { await ServerProbe.run(options, group: nil, connection: ProbeConnection(channel: channel, handler: handler)) }

        var client = try ClientOutputChecker()
        for entry in transcript.entries {
            switch entry {
            case .client(let line):
                let expected = try client.expected(line)
                var unit = try client.next()
                var silentMilliseconds = 0
                while unit == nil {
                    if let written = try await channel.readOutbound(as: ByteBuffer.self) {
                        client.append(Array(written.readableBytesView))
                        unit = try client.next()
                    } else {
                        // Nothing written yet: the probe computes, sleeps between time queries, or
                        // waits for an answer the server never sends; let virtual time pass.
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
        let report = await probe.value
        #expect(report.failure == nil, "\(report.text())")
        #expect(report.registration?.fields == ["username", "password"])
        #expect(report.sasl?.used == "PLAIN")
        #expect(report.login?.jid.hasPrefix("user1@load.test/") == true)
        #expect(report.streamManagement == ["http://www.xmpp.org/extensions/xep-0198.html#ns"])
        #expect(report.discoItems?.mucService == "conference.load.test")
        #expect(report.software?.name == "jabberd2")
        #expect(
            report.ping
                == ProbeReport.QueryOutcome(
                    answer: .error, condition: "feature-not-implemented", roundTripMilliseconds: report.ping?.roundTripMilliseconds))
        #expect(report.entityTime?.clock?.samples == 5)
        #expect(report.presence?.echoed == false)
        #expect(report.streamClose?.answered == true)
        #expect(report.implications.contains { $0.hasPrefix("presence is not echoed") })
    }
}
