import LoadResults

/// What a run returns: the summary exactly as written to `summary.json` (verdict applied) and the
/// verdict itself, which the command line turns into its exit status.
public struct RunResult: Sendable {
    public var summary: RunSummary
    public var verdict: Verdict

    public init(summary: RunSummary, verdict: Verdict) {
        self.summary = summary
        self.verdict = verdict
    }
}
