import LoadResults

/// Where a run's results go while it runs and at its end — the intervals file, the report, the
/// Prometheus endpoint, the console, a threshold checker — each fed the same snapshots.
///
/// Contract: `LoadRun` calls every output in turn on its orchestrating task, one call at a time and
/// in order: `intervalEnded` once per interval (the last one after the run stopped), `progress` for
/// notices, `runEnded` once after `manifest.json` and `summary.json` are written. An output keeps
/// what it needs of the intervals itself (the run does not keep them: a soak run has thousands).
/// An error thrown from an output ends the run with that error.
///
/// An output may ask the run to stop (`--abort-on-fail`): `intervalEnded` returns the reason, and
/// the run handles it as `LoadRun.requestStop(reason:)`. After each interval the run asks every
/// output for a notice of its own (`takeNotice`) and passes it to all of them. Before summary.json
/// is written, each output in turn may add what only it knows (`complete`: interval write
/// failures, the verdict); the run itself keeps the figures the summary is made of.
public protocol RunOutput: Sendable {
    /// An interval ended. Returns a reason to stop the run, or nil to let it go on.
    func intervalEnded(_ interval: IntervalEnd) throws -> StopReason?
    /// A notice while the run goes (stopping, the metrics endpoint's address). Default: ignored.
    func progress(_ event: ProgressEvent)
    /// A notice of this output's own for every output (writes failing), asked after each interval.
    /// Default: none.
    func takeNotice() -> ProgressEvent?
    /// The run is about to write summary.json: add what only this output knows. Default: nothing.
    func complete(_ summary: inout RunSummary)
    /// The run ended; its manifest and summary are written.
    func runEnded(_ end: RunEnd) throws
}

extension RunOutput {
    public func progress(_ event: ProgressEvent) {}
    public func takeNotice() -> ProgressEvent? { nil }
    public func complete(_ summary: inout RunSummary) {}
}
