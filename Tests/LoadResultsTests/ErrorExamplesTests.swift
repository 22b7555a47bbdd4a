import Foundation
import Testing

@testable import LoadResults

/// One example of the server's text per error kind: first seen wins, bounded in count and length,
/// one printable line, escaped in report.html.
@Suite struct ErrorExamplesTests {
    @Test(
        arguments: [
            ("Room is full", "Room is full"),
            ("  two\n\tlines\u{0007}and a bell  ", "two lines and a bell"),
            ("\u{1B}[31mred\u{1B}[0m", "[31mred [0m"),
            ("\u{202E}reversed", "reversed"),
            ("", nil),
            (" \n\t", nil),
        ] as [(String, String?)])
    func sanitizes(_ text: String, _ expected: String?) {
        #expect(ErrorExamples.sanitized(text) == expected)
    }

    @Test func longTextsAreCut() throws {
        let cut = try #require(ErrorExamples.sanitized(String(repeating: "x", count: 10_000)))
        #expect(cut.count == ErrorExamples.maxCharacters)
        #expect(cut.hasSuffix("…"))
        #expect(ErrorExamples.sanitized(String(repeating: "y", count: ErrorExamples.maxCharacters - 1))?.hasSuffix("y") == true)
    }

    @Test func theRecorderKeepsTheFirstTextPerKindOnceAndEvaluatesLazily() {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        var evaluated = 0
        func text(_ value: String) -> String {
            evaluated += 1
            return value
        }
        recorder.recordErrorExample(kind: "stanza-forbidden", text: text("first"))
        recorder.recordErrorExample(kind: "stanza-forbidden", text: text("second"))
        recorder.recordErrorExample(kind: "message-service-unavailable", text: nil)
        #expect(evaluated == 1)
        let first = recorder.takeSnapshot(start: 0, end: 1)
        #expect(first.errorExamples == ["stanza-forbidden": "first"])
        // Later intervals do not repeat a kind this loop already reported.
        recorder.recordErrorExample(kind: "stanza-forbidden", text: text("third"))
        #expect(recorder.takeSnapshot(start: 1, end: 2).errorExamples == nil)
        #expect(evaluated == 1)
    }

    @Test func examplesAreCappedLikeTheKinds() {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        for index in 0..<(CardinalityCap.errorKinds * 3) {
            recorder.recordErrorExample(kind: "stanza-k\(index)", text: "text \(index)")
        }
        #expect(recorder.takeSnapshot(start: 0, end: 1).errorExamples?.count == CardinalityCap.errorKinds)
        let many = Dictionary(uniqueKeysWithValues: (0..<(CardinalityCap.errorKinds * 2)).map { ("k\($0)", "t") })
        #expect(ErrorExamples.merge(nil, many)?.count == CardinalityCap.errorKinds)
    }

    @Test func mergingKeepsTheEarlierExampleAndSurvivesJSON() throws {
        var earlier = IntervalSnapshot(start: 0, end: 1)
        earlier.errors = ["stanza-forbidden": 1]
        earlier.errorExamples = ["stanza-forbidden": "earlier"]
        var later = IntervalSnapshot(start: 1, end: 2)
        later.errors = ["stanza-forbidden": 1, "stanza-item-not-found": 2]
        later.errorExamples = ["stanza-forbidden": "later", "stanza-item-not-found": "no such item"]
        earlier.accumulate(later)
        #expect(earlier.errorExamples == ["stanza-forbidden": "earlier", "stanza-item-not-found": "no such item"])
        let decoded = try JSONDecoder().decode(IntervalSnapshot.self, from: JSONEncoder().encode(earlier))
        #expect(decoded == earlier)
        let old = try JSONDecoder().decode(IntervalSnapshot.self, from: JSONEncoder().encode(IntervalSnapshot(start: 0, end: 1)))
        #expect(old.errorExamples == nil)
    }

    @Test func reportsShowTheTextEscaped() throws {
        var total = IntervalSnapshot(start: 0, end: 10)
        total.errors = ["stanza-forbidden": 3, "tls-certificate-self-signed": 1]
        total.errorExamples = ["stanza-forbidden": "<script>alert(1)</script> & more"]
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(), endedAt: Date(), stopReason: "completed",
            total: total, healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"error_examples\""))
        let text = TextReport.render(summary)
        #expect(text.contains("    server: <script>alert(1)</script> & more"))
        #expect(text.contains("    hint: the server's certificate is self-signed"))
        let html = HTMLReport.tables(summary)
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"))
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("--insecure"))
    }
}
