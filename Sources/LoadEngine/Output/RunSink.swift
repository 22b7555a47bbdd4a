import LoadResults

/// Where a run's figures go while it runs and at its end — the console, the Prometheus endpoint, a
/// capacity search's step log, a test's recorder. A sink only takes what it is given: it never asks
/// the run to stop, never changes the summary and never talks to another sink. The run judges
/// itself (`RunJudge`) and writes its own results files (intervals.jsonl, summary.json,
/// manifest.json, report.html); what steers a run from outside is a `RunInput`.
///
/// Contract: `LoadRun` calls every sink in turn on its orchestrating task, one call at a time and in
/// order: `intervalEnded` once per interval (the last one after the run stopped), `notice` for what
/// happens between intervals, `runEnded` once after every results file is written. A sink keeps
/// what it needs of the intervals itself (the run does not keep them: a soak run has thousands).
public protocol RunSink: Sendable {
    /// An interval ended.
    func intervalEnded(_ interval: IntervalEnd)
    /// A notice while the run goes (stopping, an endpoint's address, a threshold that stopped it).
    /// Default: ignored.
    func notice(_ notice: RunNotice)
    /// The run ended; its files are written and its verdict is in `end`.
    func runEnded(_ end: RunEnd)
}

extension RunSink {
    public func notice(_ notice: RunNotice) {}
    public func runEnded(_ end: RunEnd) {}
}
