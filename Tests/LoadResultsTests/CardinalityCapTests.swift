import Foundation
import Testing

@testable import LoadResults

/// Labels that come from the server stay bounded, in a recorder and when snapshots merge.
@Suite struct CardinalityCapTests {
    @Test(arguments: [
        ("message-bad-request", "message-other"),
        ("iq-made-up-17", "iq-other"),
        ("plain", "other"),
    ])
    func otherKey(_ value: String, _ expected: String) {
        #expect(CardinalityCap.otherKey(for: value) == expected)
    }

    @Test func aRecorderFoldsNewErrorKindsBeyondTheCap() {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        let distinct = CardinalityCap.errorKinds + 500
        for number in 0..<distinct {
            recorder.recordError(kind: "iq-made-up-\(number)")
        }
        recorder.recordError(kind: "iq-made-up-0")  // an existing kind keeps counting
        let snapshot = recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors.count == CardinalityCap.errorKinds + 1)
        #expect(snapshot.errors["iq-made-up-0"] == 2)
        #expect(snapshot.errors["iq-other"] == 500)
        #expect(snapshot.errorCount == UInt64(distinct + 1))
        #expect(snapshot.folded?[CardinalityCap.errorsFamily] == 500)
    }

    @Test func roomsAreCappedToo() {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        for number in 0..<(CardinalityCap.rooms + 10) {
            recorder.groupchatReceived(room: "room\(number)@muc.load.test")
        }
        let snapshot = recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.rooms.count == CardinalityCap.rooms + 1)
        #expect(snapshot.rooms["other"]?.received == 10)
        #expect(snapshot.folded?[CardinalityCap.roomsFamily] == 10)
    }

    /// Each loop's recorder stays under the cap, but many loops (or many intervals) together would
    /// not: the merge caps again, and the summary says how many were folded.
    @Test func mergingCapsAcrossLoopsAndIntervalsAndTheSummaryCountsTheFolded() {
        var total = IntervalSnapshot()
        for loop in 0..<10 {
            var recorder = MetricsRecorder(registry: MetricRegistry())
            for number in 0..<100 {
                recorder.recordError(kind: "message-c\(loop)-\(number)")
            }
            total.accumulate(recorder.takeSnapshot(start: Double(loop), end: Double(loop + 1)))
        }
        #expect(total.errors.count == CardinalityCap.errorKinds + 1)
        #expect(total.errorCount == 1000)
        #expect(total.errors["message-other"] == 800)
        #expect(total.folded?[CardinalityCap.errorsFamily] == 800)
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(), endedAt: Date(), stopReason: "completed",
            total: total, healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        #expect(summary.folded?[CardinalityCap.errorsFamily] == 800)
        #expect(summary.errors.count == CardinalityCap.errorKinds + 1)
    }

    @Test func foldedCountsSurviveTheIntervalLog() throws {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        for number in 0...CardinalityCap.errorKinds {
            recorder.recordError(kind: "x-\(number)")
        }
        let snapshot = recorder.takeSnapshot(start: 0, end: 1)
        let line = try ResultsDirectory.line(for: snapshot)
        let decoded = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line.dropLast())
        #expect(decoded.folded == [CardinalityCap.errorsFamily: 1])
        #expect(decoded.errors == snapshot.errors)
    }
}
