import Foundation

/// The files of one run: `manifest.json`, `intervals.jsonl`, `summary.json`, `report.html`.
///
/// Writing: the interval log is appended one line per interval with a direct write(2) (no user-space
/// buffer), so a crash or kill -9 loses at most the interval in progress. Reading: `load` returns
/// the manifest, intervals and summary of a directory, skipping a torn last line.
///
/// Results are never lost to a full disk: `create()` sets aside `reserveBytes` in a reserve file;
/// when writing the manifest, summary or report fails, the reserve is released and the write tried
/// again, so the (small) summary still fits. A directory that already holds a run is refused by
/// `create()` unless `overwrite`, which first removes the old run's files.
public struct ResultsDirectory: Sendable {
    public let path: String

    public static let manifestFile = "manifest.json"
    public static let intervalsFile = "intervals.jsonl"
    public static let summaryFile = "summary.json"
    public static let reportFile = "report.html"
    /// The first failed sessions per error kind with their last stanzas (`FailureForensics`); written
    /// only when a session failed.
    public static let forensicsFile = "forensics.json"
    /// Space set aside for the final files; removed when the report is written.
    public static let reserveFile = ".space-reserve"
    /// Bytes set aside by `create()` (4 MiB: a summary is a few KiB, a report well under 4 MiB).
    public static let reserveBytes = 4 << 20
    /// The files of a run; any of them present means the directory holds a run.
    public static let runFiles = [manifestFile, intervalsFile, summaryFile, reportFile, forensicsFile]

    public init(path: String) { self.path = path }

    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }()

    /// True when the directory already holds (part of) a run.
    public var holdsRun: Bool {
        Self.runFiles.contains { FileManager.default.fileExists(atPath: file($0)) }
    }

    /// Creates the directory (and parents) and sets aside the space reserve.
    ///
    /// - Parameter overwrite: when the directory already holds a run, remove its files first;
    ///   without it such a directory is refused (`ResultsDirectoryError.holdsRun`), so two runs never
    ///   mix in one `intervals.jsonl`.
    /// - Throws: `ResultsDirectoryError.notWritable` when this process cannot create or write the
    ///   directory, `.holdsRun`, or what creating it threw.
    public func create(overwrite: Bool = false) throws {
        // Said before anything is written, with what to do about it (the usual case: a container's
        // user and a mounted folder that root owns), instead of Foundation's "You don't have permission".
        if let problem = ResultsDirectoryError.checkWritable(path) { throw problem }
        if holdsRun {
            guard overwrite else { throw ResultsDirectoryError.holdsRun(path) }
            for name in Self.runFiles where FileManager.default.fileExists(atPath: file(name)) {
                try FileManager.default.removeItem(atPath: file(name))
            }
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        reserveSpace()
    }

    /// Writes the reserve file (best effort: a disk already full gets no reserve).
    func reserveSpace() {
        let descriptor = open(file(Self.reserveFile), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        if posix_fallocate(descriptor, 0, off_t(Self.reserveBytes)) != 0 {
            _ = ftruncate(descriptor, 0)
        }
    }

    /// Removes the reserve file; true when there was one to release.
    @discardableResult
    public func releaseReserve() -> Bool {
        (try? FileManager.default.removeItem(atPath: file(Self.reserveFile))) != nil
    }

    /// Writes `data` atomically; on failure releases the reserve and tries once more.
    func write(_ data: Data, to name: String) throws {
        let url = URL(fileURLWithPath: file(name))
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            guard releaseReserve() else { throw error }
            try data.write(to: url, options: .atomic)
        }
    }

    public func writeManifest(_ manifest: RunManifest) throws {
        try write(Self.prettyEncoder.encode(manifest), to: Self.manifestFile)
    }

    public func writeSummary(_ summary: RunSummary) throws {
        try write(Self.prettyEncoder.encode(summary), to: Self.summaryFile)
    }

    /// Writes `forensics.json` (`FailureForensicsFile`) when `forensics` holds any failed session.
    public func writeForensics(_ forensics: FailureForensics?) throws {
        guard let forensics, !forensics.isEmpty else { return }
        // Slashes unescaped: the stanzas' namespaces stay readable (`http://etherx.jabber.org/streams`).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try write(encoder.encode(FailureForensicsFile(forensics)), to: Self.forensicsFile)
    }

    public func readForensics() throws -> FailureForensicsFile {
        try Self.decoder.decode(FailureForensicsFile.self, from: Data(contentsOf: URL(fileURLWithPath: file(Self.forensicsFile))))
    }

    /// Writes the report, the last file of a run: the reserve is released afterwards.
    public func writeReport(_ html: String) throws {
        defer { releaseReserve() }
        try write(Data(html.utf8), to: Self.reportFile)
    }

    /// Encodes one interval as a JSON line.
    public static func line(for snapshot: IntervalSnapshot) throws -> Data {
        var data = try encoder.encode(snapshot)
        data.append(0x0A)
        return data
    }

    public func readManifest() throws -> RunManifest {
        try Self.decoder.decode(RunManifest.self, from: Data(contentsOf: URL(fileURLWithPath: file(Self.manifestFile))))
    }

    public func readSummary() throws -> RunSummary {
        try Self.decoder.decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: file(Self.summaryFile))))
    }

    /// The intervals, in order; a last line cut short by a crash is skipped.
    public func readIntervals() throws -> [IntervalSnapshot] {
        let data = try Data(contentsOf: URL(fileURLWithPath: file(Self.intervalsFile)))
        var snapshots: [IntervalSnapshot] = []
        for line in data.split(separator: 0x0A) where !line.isEmpty {
            if let snapshot = try? Self.decoder.decode(IntervalSnapshot.self, from: Data(line)) {
                snapshots.append(snapshot)
            }
        }
        return snapshots
    }
}

/// Appends interval lines to `intervals.jsonl`, one write(2) per line.
///
/// A failed write (disk full) does not end the run: the line is kept (up to `maxPendingLines`, the
/// oldest dropped beyond) and written before the next one, `failedWrites` counts the failures and
/// `droppedLines` the lines given up; `append` throws only when the line cannot be encoded.
public final class IntervalLogWriter: @unchecked Sendable {
    // @unchecked: used by one task at a time (the run's collector loop); the handle is not shared.
    private let handle: FileHandle
    /// Lines whose write failed, oldest first.
    private var pending: [Data] = []
    /// Most lines kept while the disk refuses writes.
    public static let maxPendingLines = 720
    /// Writes that failed so far.
    public private(set) var failedWrites = 0
    /// Lines dropped because `maxPendingLines` were already waiting.
    public private(set) var droppedLines = 0
    /// The last write error, for a report to the user.
    public private(set) var lastError: String?

    /// Lines waiting for the disk.
    public var pendingLines: Int { pending.count }

    public init(directory: ResultsDirectory) throws {
        let path = directory.file(ResultsDirectory.intervalsFile)
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    /// Appends one interval (after any lines still pending); see the type's documentation.
    public func append(_ snapshot: IntervalSnapshot) throws {
        if pending.count >= Self.maxPendingLines {
            pending.removeFirst()
            droppedLines += 1
        }
        pending.append(try ResultsDirectory.line(for: snapshot))
        flush()
    }

    /// Appends one line that is not an interval (a `ControlEvent`), in order with the intervals.
    public func append(line: Data) {
        if pending.count >= Self.maxPendingLines {
            pending.removeFirst()
            droppedLines += 1
        }
        pending.append(line)
        flush()
    }

    /// Writes pending lines in order; stops at the first failure. True when none is left.
    @discardableResult
    public func flush() -> Bool {
        while let line = pending.first {
            let offset = handle.offsetInFile
            do {
                try handle.write(contentsOf: line)
            } catch {
                failedWrites += 1
                lastError = "\(error)"
                // Drop a torn partial line, so the next attempt starts at a line boundary.
                try? handle.truncate(atOffset: offset)
                try? handle.seek(toOffset: offset)
                return false
            }
            pending.removeFirst()
        }
        return true
    }

    deinit { try? handle.close() }
}
