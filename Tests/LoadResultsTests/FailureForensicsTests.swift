import Foundation
import Testing

@testable import LoadResults

/// `FailureForensics` (bounded, first-failed-first, mergeable in any grouping), `LoginFailures`, and
/// how both reach summary.json, forensics.json and the reports.
@Suite struct FailureForensicsTests {
    static func session(_ kind: String, _ serial: Int, at seconds: Double, stanzas: Int = 1, bytes: Int = 10) -> FailedSession {
        FailedSession(
            kind: kind, session: serial, account: "user\(serial)", phase: "sasl", detail: "detail",
            failedAtSeconds: seconds,
            stanzas: (0..<stanzas).map { ForensicStanza(direction: .sent, atMilliseconds: Double($0), text: String(repeating: "x", count: bytes)) })
    }

    @Test func keepsTheFirstSessionsPerKindWhateverTheOrderOffered() {
        var forensics = FailureForensics()
        for (serial, seconds) in [(5, 5.0), (1, 1.0), (4, 4.0), (2, 2.0), (3, 3.0)] {
            forensics.offer(Self.session("sasl-not-authorized", serial, at: seconds))
        }
        #expect(forensics.kinds["sasl-not-authorized"]?.map(\.session) == [1, 2, 3])
        #expect(!forensics.wants(kind: "sasl-not-authorized"))
        #expect(forensics.wants(kind: "timeout-login"))
    }

    @Test func boundsStanzasAndTheirBytes() {
        var forensics = FailureForensics()
        forensics.offer(Self.session("k", 0, at: 0, stanzas: 20, bytes: 2_000))
        let kept = forensics.kinds["k"]![0]
        #expect(kept.stanzas.count == FailureForensics.stanzasPerSession)
        #expect(kept.stanzas.first?.atMilliseconds == 12, "the last ones are kept")
        for stanza in kept.stanzas {
            #expect(stanza.text.utf8.count <= FailureForensics.maxStanzaBytes)
            #expect(stanza.truncated == true)
            #expect(stanza.text.hasSuffix("…"))
        }
        // A multi-byte character is never cut in half, and cutting twice changes nothing.
        let wide = ForensicStanza(direction: .received, atMilliseconds: 0, text: String(repeating: "é", count: 600)).bounded()
        #expect(wide.text.utf8.count <= FailureForensics.maxStanzaBytes)
        #expect(wide.bounded() == wide)
    }

    @Test func keepsTheKindsThatFailedFirst() {
        var forensics = FailureForensics()
        for index in 0..<(FailureForensics.maxKinds + 5) {
            forensics.offer(Self.session("kind-\(index)", index, at: Double(100 - index)))
        }
        #expect(forensics.kinds.count == FailureForensics.maxKinds)
        #expect(forensics.kinds["kind-\(FailureForensics.maxKinds + 4)"] != nil, "failed earliest")
        #expect(forensics.kinds["kind-0"] == nil, "failed last")
        #expect(!forensics.wants(kind: "a-new-kind"))
    }

    @Test func mergingIsAssociativeAndCommutative() {
        func part(_ offset: Int) -> FailureForensics {
            var forensics = FailureForensics()
            for index in 0..<6 {
                let serial = offset * 10 + index
                forensics.offer(Self.session(index.isMultiple(of: 2) ? "a" : "b-\(offset)", serial, at: Double((serial * 7) % 13)))
            }
            return forensics
        }
        let (x, y, z) = (part(1), part(2), part(3))
        func merged(_ parts: FailureForensics...) -> FailureForensics {
            var total = FailureForensics()
            for piece in parts { total.merge(piece) }
            return total
        }
        var yz = y
        yz.merge(z)
        var xThenYZ = x
        xThenYZ.merge(yz)
        #expect(merged(x, y, z) == xThenYZ)
        #expect(merged(x, y, z) == merged(z, x, y))
        #expect(merged(x, y, z) == merged(y, z, x))
        #expect(merged(x, y, z).kinds["a"]?.count == FailureForensics.sessionsPerKind)
        #expect(merged(x, x) == x, "merging the same sessions twice keeps them once")
    }

    @Test func snapshotsCarryAndMergeTheForensicsAndLoginFailures() throws {
        var registry = MetricRegistry()
        _ = registry.register("login")
        var loopA = MetricsRecorder(registry: registry)
        var loopB = MetricsRecorder(registry: registry)
        loopA.recordLoginFailure(phase: "bind", kind: "timeout-login")
        loopB.recordLoginFailure(phase: "bind", kind: "timeout-login")
        loopB.recordLoginFailure(phase: "sasl", kind: "sasl-not-authorized")
        loopA.recordForensics(Self.session("timeout-login", 1, at: 2))
        loopB.recordForensics(Self.session("timeout-login", 2, at: 1))
        var interval = loopA.takeSnapshot(start: 0, end: 5)
        interval.merge(loopB.takeSnapshot(start: 0, end: 5))
        #expect(interval.loginFailures == ["bind": ["timeout-login": 2], "sasl": ["sasl-not-authorized": 1]])
        #expect(interval.forensics?.kinds["timeout-login"]?.map(\.session) == [2, 1])
        // Through intervals.jsonl and back.
        let line = try ResultsDirectory.line(for: interval)
        let decoded = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line)
        #expect(decoded == interval)
        // An older line without them still reads.
        var old = IntervalSnapshot(start: 0, end: 5)
        old.counters = ["sessions_started": 1]
        let oldLine = try ResultsDirectory.line(for: old)
        #expect(try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: oldLine).forensics == nil)

        var total = IntervalSnapshot()
        total.accumulate(interval)
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 5),
            stopReason: "completed", total: total, healths: [], peakConcurrent: 0, ledger: LedgerCounts(), descriptorLimits: nil)
        #expect(summary.loginFailuresByPhase == ["bind": 2, "sasl": 1])
        let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"login_failures_by_phase\":{"))
        let text = TextReport.render(summary)
        #expect(text.contains("login failures by phase  sasl 1  bind 2"))
        #expect(text.contains("wrong password or account missing"))
        #expect(text.contains("jabberd2 does not answer bind on a stream that just registered"))
    }

    @Test func theReportShowsWhyTheyFailedEscaped() throws {
        var total = IntervalSnapshot()
        var forensics = FailureForensics()
        forensics.offer(
            FailedSession(
                kind: "sasl-not-authorized", session: 7, account: "user8", node: "127.0.0.1:5222", phase: "sasl", detail: "not-authorized",
                failedAtSeconds: 1.25,
                stanzas: [
                    ForensicStanza(direction: .sent, atMilliseconds: 3.5, text: "<auth mechanism=\"PLAIN\">[redacted]</auth>"),
                    ForensicStanza(direction: .received, atMilliseconds: 4.25, text: "<failure><not-authorized/></failure>"),
                ]))
        total.forensics = forensics
        total.loginFailures = ["sasl": ["sasl-not-authorized": 1]]
        total.errors = ["sasl-not-authorized": 1]
        let manifest = RunManifest(
            runID: "r", profiles: [], server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-1", tls: "none",
            loadModel: "m", seed: 1, segment: "0/1", commandLine: [], startedAt: Date(timeIntervalSince1970: 0), intervalSeconds: 5)
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 5),
            stopReason: "completed", total: total, healths: [], peakConcurrent: 0, ledger: LedgerCounts(), descriptorLimits: nil)
        var timeline = MergedResults.Timeline()
        timeline.add(total)
        let html = HTMLReport.render(MergedResults(directory: "d", manifest: manifest, summary: summary, timeline: timeline))
        #expect(html.contains("<h2 id=\"forensics\">Why did these fail</h2>"))
        #expect(html.contains("<h3>sasl-not-authorized</h3>"))
        #expect(html.contains("session 7 · user8 · node 127.0.0.1:5222 · phase sasl"))
        #expect(
            html.contains("<td>3.5</td><td title=\"out\">→</td><td><code>&lt;auth mechanism=&quot;PLAIN&quot;&gt;[redacted]&lt;/auth&gt;</code></td>")
        )
        #expect(html.contains("<td title=\"in\">←</td>"))
        #expect(html.contains("<h2>Login failures by phase</h2>"))

        // forensics.json: the bounds beside the sessions, and it reads back.
        let directory = NSTemporaryDirectory() + "forensics-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let results = ResultsDirectory(path: directory)
        try results.create()
        try results.writeForensics(forensics)
        let file = try results.readForensics()
        #expect(file.kinds == forensics)
        #expect(file.bounds.sessionsPerKind == FailureForensics.sessionsPerKind)
        let written = try String(contentsOfFile: results.file(ResultsDirectory.forensicsFile), encoding: .utf8)
        #expect(written.contains("\"stanzas_per_session\" : 8"))
        #expect(written.contains("\"failed_at_s\" : 1.25"))
        // Nothing failed: no file.
        let empty = ResultsDirectory(path: directory + "-empty")
        defer { try? FileManager.default.removeItem(atPath: empty.path) }
        try empty.create()
        try empty.writeForensics(FailureForensics())
        #expect(!FileManager.default.fileExists(atPath: empty.file(ResultsDirectory.forensicsFile)))
    }

    @Test(arguments: [
        ("bind", ["timeout-login": 30] as [String: UInt64], "log in on a fresh stream"),
        ("sasl", ["sasl-not-authorized": 2], "xmppload provision"),
        ("connect", ["connect-refused": 1], "is the server up"),
        ("tls", ["tls": 1], "--insecure"),
    ])
    func everyPhaseHasAHint(_ phase: String, _ kinds: [String: UInt64], _ expected: String) throws {
        let hint = try #require(LoginFailureHint.hint(phase: phase, kinds: kinds))
        #expect(hint.contains(expected))
    }

    @Test func everyLoginPhaseHasSomeHint() {
        for phase in LoginFailures.phases { #expect(LoginFailureHint.hint(phase: phase, kinds: [:]) != nil, "\(phase)") }
    }
}
