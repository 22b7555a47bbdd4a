/// What went wrong writing `intervals.jsonl` during a run (disk full, I/O error), for `summary.json`
/// (`interval_writes`, absent when every write succeeded) and the console.
///
/// Counts are of the whole run: `failedWrites` write(2) attempts that failed (each failed line is
/// retried before the next interval's), `droppedLines` intervals given up because the backlog was
/// full (`IntervalLogWriter.maxPendingLines`), `pendingLines` intervals still unwritten when the
/// summary was made. `lastError` is the last failure's description (no secrets: an errno text).
public struct IntervalWriteFailures: Codable, Sendable, Equatable {
    public var failedWrites: Int
    public var droppedLines: Int
    public var pendingLines: Int
    public var lastError: String?

    enum CodingKeys: String, CodingKey {
        case failedWrites = "failed_writes"
        case droppedLines = "dropped_lines"
        case pendingLines = "pending_lines"
        case lastError = "last_error"
    }

    public init(failedWrites: Int, droppedLines: Int, pendingLines: Int, lastError: String?) {
        self.failedWrites = failedWrites
        self.droppedLines = droppedLines
        self.pendingLines = pendingLines
        self.lastError = lastError
    }

    /// One line for a person: how many writes failed, what is lost or waiting, and why.
    public var sentence: String {
        var parts = ["\(failedWrites) write\(failedWrites == 1 ? "" : "s") to intervals.jsonl failed"]
        if pendingLines > 0 { parts.append("\(pendingLines) interval\(pendingLines == 1 ? "" : "s") not yet written") }
        if droppedLines > 0 { parts.append("\(droppedLines) interval\(droppedLines == 1 ? "" : "s") dropped") }
        if pendingLines == 0 && droppedLines == 0 { parts.append("every interval was written on a retry") }
        return parts.joined(separator: ", ") + (lastError.map { " (last error: \($0))" } ?? "")
    }
}
