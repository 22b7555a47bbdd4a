import Foundation
import LoadResults

/// Writes `report.html` at the run's end, rendered from memory: the intervals are reduced to chart
/// points as they end (`MergedResults.Timeline`, one small point per interval), and the end's
/// manifest and summary complete them — the same values (each interval as `intervals.jsonl` holds
/// it) and code `xmppload report DIR` uses after reading the directory back, so both give the same
/// report.
public final class ReportOutput: RunOutput, @unchecked Sendable {
    // @unchecked: `timeline` is only touched while holding `lock`.
    private let lock = NSLock()
    private var timeline = MergedResults.Timeline()

    public init() {}

    public func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        lock.withLock { timeline.add(asWritten: interval.snapshot) }
        return nil
    }

    public func runEnded(_ end: RunEnd) throws {
        let results = MergedResults(
            directory: end.directory.path, manifest: end.manifest, summary: end.summary,
            timeline: lock.withLock { timeline })
        try end.directory.writeReport(HTMLReport.render(results))
    }
}
