import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOEmbedded
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// The whole TCP session pipeline (byte counter → virtual user) on an `EmbeddedChannel`
/// (`PipelineHarness`), replaying server transcripts recorded from a real Prosody. No sockets; timers
/// fire when the test advances time.
@Suite struct SessionPipelineTests {
    static let profileYAML = """
        name: pipeline
        login: {sasl: PLAIN, tls: none, resource: r1}
        steps:
          - login
          - roster: get
          - presence: available
          - logout
        """

    /// A harness for `profile` over TCP without TLS (`PipelineHarness`).
    static func harness(profile yaml: String = profileYAML) throws -> PipelineHarness {
        try PipelineHarness(profile: yaml, tls: TLSMode.none)
    }

    /// A user of an idle profile (login, stay_online), logged in over PLAIN without TLS; the client's
    /// output so far is consumed.
    static func idleAndLoggedIn() throws -> PipelineHarness {
        let harness = try Self.harness(
            profile: """
                name: idle
                login: {sasl: PLAIN, tls: none, resource: r1}
                steps: [login, stay_online, logout]
                """)
        harness.start()
        try harness.serverSends(
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'><stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
        )
        try harness.serverSends("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try harness.serverSends(
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'><stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"
        )
        try harness.serverSends(
            "<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>")
        _ = try harness.clientBytes()
        return harness
    }

    @Test func recordedProsodyLoginRunsTheWholeProfile() throws {
        let harness = try Self.harness()
        harness.start()
        try harness.replay(Transcript(named: "prosody-0.12-login-plain"))
        // After the server's </stream:stream> the session ends cleanly.
        #expect(harness.isEnded, "session did not end")
        // The login, step and logout timeouts armed on the way are stale now: they must not fire.
        harness.loop.advanceTime(by: .seconds(120))
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsLoggedIn) == 1)
        #expect(snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.counter(.sessionsFailed) == 0)
        #expect(snapshot.errors.isEmpty)
        for name in ["login", "login.connect", "login.features", "login.sasl", "login.bind", "roster.get", "presence", "logout"] {
            #expect(snapshot.latency[name]?.count == 1, "no latency recorded for \(name)")
        }
        #expect(snapshot.counter(.bytesReceived) > 1000)
        #expect(snapshot.counter(.bytesSent) > 300)
        #expect(harness.context.liveSessionCount == 0)
        try harness.finish()
    }

    @Test func unexpectedIQBeforeSuccessIsAnsweredAndTheLoginSucceeds() throws {
        let harness = try Self.harness()
        harness.start()
        try harness.replay(Transcript(named: "prosody-0.12-iq-before-success"))
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsLoggedIn) == 1)
        #expect(snapshot.counter(.unexpectedStanzas) == 1)
        #expect(snapshot.errors.isEmpty)
        try harness.finish()
    }

    @Test func aSilentServerTimesTheLoginOut() throws {
        let harness = try Self.harness()
        harness.start()
        _ = try harness.clientBytes()  // the stream header
        try harness.serverSends(
            "<?xml version='1.0'?><stream:stream id='x' from='load.test' version='1.0' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"
        )
        // The server goes silent: no features. Nothing happens until the login timeout (30 s default).
        harness.loop.advanceTime(by: .seconds(29))
        #expect(!harness.isEnded, "ended before the timeout")
        harness.loop.advanceTime(by: .seconds(2))
        #expect(harness.isEnded, "login did not time out")
        let snapshot = harness.snapshot()
        #expect(snapshot.errors["timeout-login"] == 1)
        #expect(snapshot.errorExamples?["timeout-login"] == "stuck at features: no <stream:features> after our stream header")
        #expect(snapshot.counter(.sessionsFailed) == 1)
        #expect(!harness.channel.isActive)
    }

    @Test func malformedServerXMLEndsTheSessionWithATypedError() throws {
        let harness = try Self.harness()
        harness.start()
        try harness.serverSends(
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'><stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
        )
        // Well balanced for the framer (depth returns to 0), but <a> is closed by </b>: libxml2 rejects it.
        try harness.serverSends("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><a></b></success>")
        let snapshot = harness.snapshot()
        #expect(snapshot.errors.keys.contains { $0.hasPrefix("xml-") }, "errors: \(snapshot.errors)")
        #expect(snapshot.counter(.sessionsFailed) == 1)
    }

    @Test func serverPingsAreAnsweredWhileIdle() throws {
        let harness = try Self.idleAndLoggedIn()
        try harness.serverSends("<iq type='get' id='ping7' from='load.test' to='user1@load.test/r1'><ping xmlns='urn:xmpp:ping'/></iq>")
        let reply = String(decoding: try harness.clientBytes(), as: UTF8.self)
        #expect(reply.contains("type='result'") && reply.contains("id='ping7'"), "reply: \(reply)")
        // The run ends: the idle session logs out.
        harness.context.beginGracefulStop()
        let logout = String(decoding: try harness.clientBytes(), as: UTF8.self)
        #expect(logout.contains("unavailable") && logout.contains("</stream:stream>"))
        #expect(harness.snapshot().counter(.pingsAnswered) == 1)
    }

    /// jabberd2 2.7 as recorded: no echo of initial presence, and (without its iq-ping module) an error
    /// reply to keep-alive pings.
    @Test func recordedJabberd2WithoutEchoOrPingsNeitherFailsNorCountsRoundTrips() throws {
        let harness = try Self.harness(
            profile: """
                name: jabberd2
                login: {sasl: PLAIN, tls: none, resource: r1}
                keepalive: {ping: 10s}
                steps: [login, {roster: get}, {presence: available}, stay_online, logout]
                """)
        harness.start()
        try harness.replay(Transcript(named: "jabberd2-2.7-no-echo-ping-error"))
        // Not yet a message target: the server may not have taken the presence in.
        #expect(!harness.context.environment.directory.isOnline(0))
        // No echo: the presence step waits 2 s at most, then completes unmeasured, and the session
        // becomes a target.
        harness.loop.advanceTime(by: .milliseconds(1_900))
        #expect(harness.snapshot().counter(.presenceEchoMissing) == 0)
        harness.loop.advanceTime(by: .milliseconds(200))
        #expect(harness.context.environment.directory.isOnline(0))
        var snapshot = harness.snapshot()
        #expect(snapshot.counter(.presenceEchoMissing) == 1)
        #expect(snapshot.latency["presence"] == nil)
        #expect(snapshot.errors.isEmpty && !harness.isEnded)
        // The keep-alive ping, 10 s after the login; the server answers it as recorded.
        harness.loop.advanceTime(by: .seconds(8))
        let ping = String(decoding: try harness.clientBytes(), as: UTF8.self)
        #expect(ping.contains("<ping xmlns='urn:xmpp:ping'/>") && ping.contains("id='ka1'"), "sent: \(ping)")
        try harness.serverSends(
            "<iq xmlns='jabber:client' from='load.test' to='user1@load.test/r1' id='ka1' type='error'><error type='cancel' code='501'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error><ping xmlns='urn:xmpp:ping'></ping></iq>"
        )
        snapshot = harness.snapshot()
        #expect(snapshot.counter(.pingsUnsupported) == 1)
        #expect(snapshot.latency["keepalive.ping"] == nil, "an error reply is no round trip")
        #expect(snapshot.errors.isEmpty && !harness.isEnded)
        // From now on whitespace: no ping, no keep-alive timeout, still counted once.
        for _ in 0..<3 {
            harness.loop.advanceTime(by: .seconds(10))
            #expect(String(decoding: try harness.clientBytes(), as: UTF8.self) == " ")
        }
        #expect(!harness.isEnded)
        harness.context.beginGracefulStop()
        let logout = String(decoding: try harness.clientBytes(), as: UTF8.self)
        #expect(logout.contains("unavailable") && logout.contains("</stream:stream>"))
        try harness.serverSends("</stream:stream>")
        snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsCompleted) == 1 && snapshot.counter(.sessionsFailed) == 0)
        #expect(snapshot.counter(.pingsUnsupported) == 0, "counted once, at the first error reply (the snapshot before took it)")
        #expect(snapshot.errors.isEmpty)
        try harness.finish()
    }

    @Test func aLogoutTheServerNeverAnswersCompletesUnmeasured() throws {
        let harness = try Self.idleAndLoggedIn()
        harness.context.beginGracefulStop()
        _ = try harness.clientBytes()
        harness.loop.advanceTime(by: .seconds(4))
        #expect(!harness.isEnded)
        harness.loop.advanceTime(by: .seconds(2))
        #expect(harness.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsCompleted) == 1 && snapshot.counter(.sessionsFailed) == 0)
        #expect(snapshot.counter(.logoutsUnanswered) == 1)
        #expect(snapshot.latency["logout"] == nil)
    }

    @Test func aServerThatStopsReadingEndsTheSessionWithWriteStalled() throws {
        let harness = try Self.idleAndLoggedIn()
        // The server stops reading but keeps pinging.
        harness.channel.isWritable = false
        harness.channel.pipeline.fireChannelWritabilityChanged()
        for n in 0..<3 {
            try harness.serverSends("<iq type='get' id='ping\(n)' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        }
        harness.loop.advanceTime(by: .seconds(29))
        #expect(!harness.isEnded)
        harness.loop.advanceTime(by: .seconds(1))
        #expect(harness.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.errors == ["write-stalled": 1])
        #expect(snapshot.counter(.sessionsFailed) == 1)
    }
}
