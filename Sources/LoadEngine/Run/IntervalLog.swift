import LoadResults

/// The run's `intervals.jsonl`: each interval written as one line the moment it ends (one write(2)
/// per line), so a crash loses at most the interval in progress; control changes as lines of their
/// own between the intervals. Owned by the run, not a sink: what failed to write is one of the run's
/// figures (`summary.json` `interval_writes`).
///
/// A failed write (disk full) never ends the run: `IntervalLogWriter` keeps the line and retries it
/// before the next one. `takeNotice()` says when writes start failing and when they recover (the run
/// tells its sinks, so the console shows it). At the run's end the backlog is tried once more.
/// `@unchecked Sendable`: used by the run's orchestrating task only, one call at a time (like the writer).
final class IntervalLog: @unchecked Sendable {
    private let writer: IntervalLogWriter
    /// Whether the last notice said writes were failing (so each episode is told once).
    private var toldFailing = false

    /// Opens (or creates) `intervals.jsonl` in `directory` for appending.
    init(directory: ResultsDirectory) throws {
        writer = try IntervalLogWriter(directory: directory)
    }

    /// Writes a control change as its own line, between the intervals.
    func append(_ change: ControlEvent) { writer.append(line: change.line) }

    func append(_ interval: IntervalSnapshot) throws { try writer.append(interval) }

    /// Writes a monitor interval as its own line (`{"event":"monitor", …}`).
    func append(monitor interval: MonitorInterval) { writer.append(line: interval.line) }

    /// The change since the last call: writes began failing, or the backlog was written again; nil
    /// when nothing changed.
    func takeNotice() -> RunNotice? {
        let failing = writer.pendingLines > 0
        guard failing != toldFailing, let failures = failures() else { return nil }
        toldFailing = failing
        return failing ? .intervalWritesFailing(failures) : .intervalWritesRecovered(failures)
    }

    /// Tries the backlog once more; then what failed during the run, or nil when nothing did.
    func failures(flushing: Bool = false) -> IntervalWriteFailures? {
        if flushing { writer.flush() }
        guard writer.failedWrites > 0 else { return nil }
        return IntervalWriteFailures(
            failedWrites: writer.failedWrites, droppedLines: writer.droppedLines,
            pendingLines: writer.pendingLines, lastError: writer.lastError)
    }
}
