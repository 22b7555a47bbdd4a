import LoadResults

/// Writes each interval as one line of `intervals.jsonl` the moment it ends (one write(2) per line),
/// so a crash loses at most the interval in progress. Nothing to do at the run's end.
public struct IntervalLogOutput: RunOutput {
    private let writer: IntervalLogWriter

    /// Opens (or creates) `intervals.jsonl` in `directory` for appending.
    public init(directory: ResultsDirectory) throws {
        writer = try IntervalLogWriter(directory: directory)
    }

    public func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        try writer.append(interval.snapshot)
        return nil
    }

    public func runEnded(_ end: RunEnd) throws {}
}
