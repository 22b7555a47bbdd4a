import LoadResults

/// What every sink gets when the run ended: the summary and the final manifest, exactly as written
/// to `summary.json` and `manifest.json` in `directory`, the run's verdict, and its intervals reduced
/// as they came.
public struct RunEnd: Sendable {
    /// With the verdict applied.
    public var summary: RunSummary
    public var verdict: Verdict
    /// With `endedAt` and `stopReason` set.
    public var manifest: RunManifest
    public var directory: ResultsDirectory
    /// Every interval of the run, reduced to chart points, the total and outages (what `LoadRun`
    /// keeps in memory for the summary; the report is drawn from it).
    public var timeline: MergedResults.Timeline

    public init(summary: RunSummary, verdict: Verdict, manifest: RunManifest, directory: ResultsDirectory, timeline: MergedResults.Timeline) {
        self.summary = summary
        self.verdict = verdict
        self.manifest = manifest
        self.directory = directory
        self.timeline = timeline
    }
}
