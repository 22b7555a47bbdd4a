import LoadResults

/// Writes each interval as one line of `intervals.jsonl` the moment it ends (one write(2) per line),
/// so a crash loses at most the interval in progress.
///
/// A failed write (disk full) never ends the run: `IntervalLogWriter` keeps the line and retries it
/// before the next one. This output says so: `takeNotice()` returns a progress event when writes
/// start failing and when they recover (the run passes it to every output, so the console shows
/// it), and `failures()` is what `summary.json` records as `interval_writes`. At the run's end the
/// backlog is tried once more (`complete`).
/// `@unchecked Sendable`: used by the run's orchestrating task only, one call at a time (like the writer).
public final class IntervalLogOutput: RunOutput, @unchecked Sendable {
    private let writer: IntervalLogWriter
    /// Whether the last notice said writes were failing (so each episode is told once).
    private var toldFailing = false

    /// Opens (or creates) `intervals.jsonl` in `directory` for appending.
    public init(directory: ResultsDirectory) throws {
        writer = try IntervalLogWriter(directory: directory)
    }

    /// Writes a control change as its own line, between the intervals.
    public func progress(_ event: ProgressEvent) {
        if case .controlChanged(let change) = event { writer.append(line: change.line) }
    }

    public func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        try writer.append(interval.snapshot)
        return nil
    }

    /// The change since the last call: writes began failing, or the backlog was written again; nil
    /// when nothing changed.
    public func takeNotice() -> ProgressEvent? {
        let failing = writer.pendingLines > 0
        guard failing != toldFailing, let failures = failures() else { return nil }
        toldFailing = failing
        return failing ? .intervalWritesFailing(failures) : .intervalWritesRecovered(failures)
    }

    /// Records in the summary what failed to write (`interval_writes`), after trying the backlog once more.
    public func complete(_ summary: inout RunSummary) {
        summary.intervalWrites = failures(flushing: true)
    }

    /// Tries the backlog once more; then what failed during the run, or nil when nothing did.
    public func failures(flushing: Bool = false) -> IntervalWriteFailures? {
        if flushing { writer.flush() }
        guard writer.failedWrites > 0 else { return nil }
        return IntervalWriteFailures(
            failedWrites: writer.failedWrites, droppedLines: writer.droppedLines,
            pendingLines: writer.pendingLines, lastError: writer.lastError)
    }

    public func runEnded(_ end: RunEnd) throws {
        writer.flush()
    }
}
