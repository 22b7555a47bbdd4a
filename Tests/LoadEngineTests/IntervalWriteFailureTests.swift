import Foundation
import LoadResults
import Testing

@testable import LoadEngine

/// A full disk under `intervals.jsonl` (/dev/full fails every write with ENOSPC): the interval
/// log never throws, tells the console once when writes start failing, and reports the counts
/// that summary.json records.
@Suite struct IntervalWriteFailureTests {
    static func interval(_ second: Int) -> IntervalEnd {
        let snapshot = IntervalSnapshot(start: Double(second), end: Double(second + 1))
        return IntervalEnd(snapshot: snapshot, cumulative: snapshot, elapsed: .seconds(second + 1), planned: nil, live: 0)
    }

    static func directory() throws -> ResultsDirectory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-fulldisk-\(UUID().uuidString.prefix(8))").path
        let directory = ResultsDirectory(path: path)
        try directory.create()
        return directory
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFullDiskIsCountedAndToldOnce() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let intervals = directory.file(ResultsDirectory.intervalsFile)
        try FileManager.default.createSymbolicLink(atPath: intervals, withDestinationPath: "/dev/full")
        let output = try IntervalLog(directory: directory)
        #expect(output.takeNotice() == nil)
        #expect(output.failures() == nil)

        try output.append(Self.interval(0).snapshot)
        guard case .intervalWritesFailing(let failing) = output.takeNotice() else {
            Issue.record("no notice after a failed write")
            return
        }
        #expect(failing.failedWrites == 1)
        #expect(failing.pendingLines == 1)
        #expect(failing.lastError != nil)
        #expect(failing.sentence.hasPrefix("1 write to intervals.jsonl failed, 1 interval not yet written"))

        // Still failing: counted, retried in order, not told again.
        try output.append(Self.interval(1).snapshot)
        try output.append(Self.interval(2).snapshot)
        #expect(output.takeNotice() == nil)
        let summaryFailures = try #require(output.failures(flushing: true))
        #expect(summaryFailures.failedWrites == 4)
        #expect(summaryFailures.pendingLines == 3)
        #expect(summaryFailures.droppedLines == 0)

        // summary.json carries it (`interval_writes`) and the text report says it.
        var summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(), endedAt: Date(), stopReason: "completed",
            total: IntervalSnapshot(start: 0, end: 3), healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        summary.intervalWrites = summaryFailures
        let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"interval_writes\""))
        #expect(json.contains("\"failed_writes\":4"))
        #expect(TextReport.render(summary).contains("results: 4 writes to intervals.jsonl failed, 3 intervals not yet written"))
    }
}
