import Foundation
import LoadResults

/// Writes `report.html` at the run's end, rendered from memory: the intervals are reduced to chart
/// points as they end (`MergedResults.Timeline`, one small point per interval), and the end's
/// manifest and summary complete them — the same values and code `xmppload report DIR` uses after
/// reading the directory back, so both give the same report (histograms read as bucket values, see
/// `LatencyHistogram`, so an interval reads the same before and after `intervals.jsonl`).
public final class ReportOutput: RunOutput, @unchecked Sendable {
    // @unchecked: `timeline` is only touched while holding `lock`.
    private let lock = NSLock()
    private var reduced: MergedResults.Timeline

    /// `loadEnd`: seconds from the run's start to the planned end of the load, when known.
    public init(loadEnd: Double? = nil) {
        reduced = MergedResults.Timeline(loadEnd: loadEnd)
    }

    /// The intervals so far, reduced (chart points, total, outages).
    public var timeline: MergedResults.Timeline { lock.withLock { reduced } }

    public func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        lock.withLock { reduced.add(interval.snapshot) }
        return nil
    }

    public func runEnded(_ end: RunEnd) throws {
        let results = MergedResults(
            directory: end.directory.path, manifest: end.manifest, summary: end.summary,
            timeline: timeline)
        try end.directory.writeForensics(results.total.forensics)
        try end.directory.writeReport(HTMLReport.render(results))
    }
}
