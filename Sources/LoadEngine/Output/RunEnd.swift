import LoadResults

/// What every output gets when the run ended: the summary and the final manifest, exactly as written
/// to `summary.json` and `manifest.json` in `directory`.
public struct RunEnd: Sendable {
    public var summary: RunSummary
    /// With `endedAt` and `stopReason` set.
    public var manifest: RunManifest
    public var directory: ResultsDirectory

    public init(summary: RunSummary, manifest: RunManifest, directory: ResultsDirectory) {
        self.summary = summary
        self.manifest = manifest
        self.directory = directory
    }
}
