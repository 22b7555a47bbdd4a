import Foundation

/// The files of one run: `manifest.json`, `intervals.jsonl`, `summary.json`, `report.html`.
///
/// Writing: the interval log is appended one line per interval with a direct write(2) (no user-space
/// buffer), so a crash or kill -9 loses at most the interval in progress. Reading: `load` returns
/// the manifest, intervals and summary of a directory, skipping a torn last line.
public struct ResultsDirectory: Sendable {
    public let path: String

    public static let manifestFile = "manifest.json"
    public static let intervalsFile = "intervals.jsonl"
    public static let summaryFile = "summary.json"
    public static let reportFile = "report.html"

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

    /// Creates the directory (and parents).
    public func create() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func writeManifest(_ manifest: RunManifest) throws {
        try Self.prettyEncoder.encode(manifest).write(to: URL(fileURLWithPath: file(Self.manifestFile)), options: .atomic)
    }

    public func writeSummary(_ summary: RunSummary) throws {
        try Self.prettyEncoder.encode(summary).write(to: URL(fileURLWithPath: file(Self.summaryFile)), options: .atomic)
    }

    public func writeReport(_ html: String) throws {
        try Data(html.utf8).write(to: URL(fileURLWithPath: file(Self.reportFile)), options: .atomic)
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
public final class IntervalLogWriter: @unchecked Sendable {
    // @unchecked: used by one task at a time (the run's collector loop); the handle is not shared.
    private let handle: FileHandle

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

    public func append(_ snapshot: IntervalSnapshot) throws {
        try handle.write(contentsOf: ResultsDirectory.line(for: snapshot))
    }

    deinit { try? handle.close() }
}
