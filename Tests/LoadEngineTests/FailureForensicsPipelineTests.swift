import Foundation
import LoadResults
import NIOCore
import NIOEmbedded
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// Failure forensics through the whole session pipeline on an `EmbeddedChannel`: what a failed
/// session's transcript leaves in its loop's recorder, and what a resting session keeps.
@Suite struct FailureForensicsPipelineTests {
    @Test func aRejectedPasswordLeavesTheRedactedStanzasAndThePhaseSASL() throws {
        let harness = try SessionPipelineTests.harness()
        harness.start()
        harness.loop.advanceTime(by: .milliseconds(3))
        try harness.replay(Transcript(named: "prosody-0.12-sasl-not-authorized"))
        #expect(harness.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.errors == ["sasl-not-authorized": 1])
        #expect(snapshot.loginFailures == ["sasl": ["sasl-not-authorized": 1]])
        // The phases it completed are recorded; the one it failed in and `login` are not.
        #expect(snapshot.latency["login.connect"]?.count == 1)
        #expect(snapshot.latency["login.features"]?.count == 1)
        #expect(snapshot.latency["login.sasl"] == nil)
        #expect(snapshot.latency["login"] == nil)

        let sessions = try #require(snapshot.forensics?.kinds["sasl-not-authorized"])
        #expect(sessions.count == 1)
        let session = sessions[0]
        #expect(session.phase == "sasl")
        #expect(session.account == "user1")
        #expect(session.detail?.contains("not-authorized") == true)
        let directions = session.stanzas.map(\.direction)
        #expect(directions == [.event, .sent, .received, .received, .sent, .received])
        #expect(session.stanzas[0].text == "connected")
        #expect(session.stanzas[1].text.hasPrefix("<stream:stream"))
        #expect(session.stanzas[2].text.hasPrefix("<stream:stream from='load.test' id='0d7c2e0e"))
        #expect(session.stanzas[3].text.hasPrefix("<features xmlns='http://etherx.jabber.org/streams'><mechanisms"))
        #expect(session.stanzas[4].text == "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>[redacted]</auth>")
        #expect(session.stanzas[5].text.contains("<not-authorized/>"))
        #expect(session.stanzas[5].text.contains("Unable to authorize you"))
        // Times count from the session's intended start, in order.
        #expect(session.stanzas[0].atMilliseconds == 0)
        #expect(session.stanzas[2].atMilliseconds == 3)
        #expect(zip(session.stanzas, session.stanzas.dropFirst()).allSatisfy { $0.atMilliseconds <= $1.atMilliseconds })
        // The password and the PLAIN payload appear nowhere, not even in the encoded interval.
        let line = String(decoding: try ResultsDirectory.line(for: snapshot), as: UTF8.self)
        #expect(line.contains("sasl-not-authorized"))
        #expect(!line.contains("secret"))
        #expect(!line.contains("AHVzZXIxAHNlY3JldA=="))
        try harness.finish()
    }

    @Test func aRestingSessionLetsGoOfItsTranscriptAndALaterFailureStillShowsItsCause() throws {
        let harness = try SessionPipelineTests.idleAndLoggedIn()
        #expect(harness.user.machine.isResting(atLeast: .seconds(1)))
        #expect(!harness.user.holdsTranscript, "an idle session holds no transcript")
        // The server pings the idle session: answered, and the transcript is let go again.
        try harness.serverSends("<iq type='get' id='p1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(!harness.user.holdsTranscript)
        // A stream error ends it: the forensics hold the error, the phase is none (after login).
        try harness.serverSends(
            "<stream:error><system-shutdown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        #expect(harness.isEnded)
        let snapshot = harness.snapshot()
        let session = try #require(snapshot.forensics?.kinds["stream-system-shutdown"]?.first)
        #expect(session.phase == nil)
        #expect(session.stanzas.first?.text.contains("system-shutdown") == true)
        #expect(snapshot.loginFailures == nil)
        _ = try harness.clientBytes()
        try harness.finish()
    }

    @Test func onlyTheFirstSessionsOfAKindAreKeptPerLoop() throws {
        let harness = try SessionPipelineTests.harness()
        for serial in 0..<(FailureForensics.sessionsPerKind + 2) {
            harness.context.recorder.recordForensics(
                FailedSession(kind: "connect-refused", session: serial, account: "user\(serial)", failedAtSeconds: Double(serial), stanzas: []))
        }
        #expect(!harness.context.recorder.wantsForensics(kind: "connect-refused"))
        #expect(harness.context.recorder.wantsForensics(kind: "connect-timeout"))
        let first = harness.snapshot()
        #expect(first.forensics?.kinds["connect-refused"]?.map(\.session) == [0, 1, 2])
        // Later intervals do not start over: the loop already gave its first sessions of that kind.
        harness.context.recorder.recordForensics(
            FailedSession(kind: "connect-refused", session: 9, account: "user9", failedAtSeconds: 9, stanzas: []))
        #expect(harness.snapshot().forensics == nil)
    }
}
