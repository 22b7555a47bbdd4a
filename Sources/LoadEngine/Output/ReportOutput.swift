import Foundation
import LoadResults

/// Writes `report.html` (and `forensics.json`) at the run's end, rendered from memory: the run's
/// intervals reduced to chart points as they ended (`RunEnd.timeline`, one small point per
/// interval), with the end's manifest and summary — the same values and code `xmppload report DIR`
/// uses after reading the directory back, so both give the same report (histograms read as bucket
/// values, see `LatencyHistogram`, so an interval reads the same before and after `intervals.jsonl`).
public struct ReportOutput: RunOutput {
    public init() {}

    public func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? { nil }

    public func runEnded(_ end: RunEnd) throws {
        let results = MergedResults(
            directory: end.directory.path, manifest: end.manifest, summary: end.summary,
            timeline: end.timeline)
        try end.directory.writeForensics(results.total.forensics)
        try end.directory.writeReport(HTMLReport.render(results))
    }
}
