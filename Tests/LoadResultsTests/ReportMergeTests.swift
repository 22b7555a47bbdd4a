import Foundation
import Testing

@testable import LoadResults

/// `report` on results directories: a JSONL round trip, and two generators' directories merged equal
/// one directory holding the same data.
@Suite struct ReportMergeTests {
    static func temporaryDirectory(_ name: String) throws -> ResultsDirectory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-\(name)-\(UUID().uuidString.prefix(6))").path
        let directory = ResultsDirectory(path: path)
        try directory.create()
        return directory
    }

    static func write(_ intervals: [IntervalSnapshot], to directory: ResultsDirectory, runID: String) throws {
        let log = try IntervalLogWriter(directory: directory)
        for interval in intervals { try log.append(interval) }
        let manifest = RunManifest(
            runID: runID, profiles: [.init(name: "chat", path: "profiles/chat.yaml", sha256: "00", weight: 1)],
            server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-10", tls: "starttls",
            loadModel: "closed", seed: 1, commandLine: [], startedAt: Date(timeIntervalSince1970: 1_000_000),
            intervalSeconds: 5)
        try directory.writeManifest(manifest)
    }

    /// Three intervals of a generator; `offset` varies the data between generators.
    static func intervals(offset: UInt64) -> [IntervalSnapshot] {
        (0..<3).map { index in
            var snapshot = SnapshotTests.snapshot(seed: offset * 10 + UInt64(index))
            snapshot.start = Double(index) * 5
            snapshot.end = Double(index + 1) * 5
            snapshot.health = GeneratorHealth(
                cpuPercent: 10, cpuSeconds: 0.5, rssBytes: 50_000_000, openFileDescriptors: 100,
                loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 2, cores: 2)
            return snapshot
        }
    }

    @Test func intervalLogRoundTripsAndSkipsATornLastLine() throws {
        let directory = try Self.temporaryDirectory("jsonl")
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let written = Self.intervals(offset: 1)
        try Self.write(written, to: directory, runID: "r1")
        #expect(try directory.readIntervals() == written)
        // A crash in the middle of a write leaves a torn line: it is skipped, the rest survives.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file(ResultsDirectory.intervalsFile)))
        handle.seekToEndOfFile()
        handle.write(Data("{\"start\": 15, \"counters\": {\"sessions_st".utf8))
        try handle.close()
        #expect(try directory.readIntervals() == written)
        #expect(try MergedResults.load(directories: [directory.path]).points.count == 3)
    }

    @Test func twoGeneratorsMergedEqualOneDirectoryWithTheSameData() throws {
        let a = Self.intervals(offset: 1)
        let b = Self.intervals(offset: 2)
        let dirA = try Self.temporaryDirectory("gen-a")
        let dirB = try Self.temporaryDirectory("gen-b")
        let dirAB = try Self.temporaryDirectory("gen-ab")
        defer { for dir in [dirA, dirB, dirAB] { try? FileManager.default.removeItem(atPath: dir.path) } }
        try Self.write(a, to: dirA, runID: "run")
        try Self.write(b, to: dirB, runID: "run")
        try Self.write(zip(a, b).map { $0.merging($1) }, to: dirAB, runID: "run")

        let merged = try MergedResults.load(directories: [dirA.path, dirB.path])
        let single = try MergedResults.load(directories: [dirAB.path])
        #expect(merged.total == single.total)
        #expect(merged.points == single.points)
        #expect(merged.summary.latencyMilliseconds == single.summary.latencyMilliseconds)
        #expect(merged.summary.sessions == single.summary.sessions)
        #expect(merged.summary.errors == single.summary.errors)
        // And the order of directories does not matter.
        #expect(try MergedResults.load(directories: [dirB.path, dirA.path]).total == merged.total)
        // The text and HTML reports render the merged result.
        let text = TextReport.render(merged.summary)
        #expect(text.contains("login") && text.contains("sessions   started"))
        let html = HTMLReport.render(merged)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("merged from 2 generators"))
        #expect(!html.contains("<script"), "self-contained, no scripts")
        #expect(!html.contains("http://") || !html.contains("src=\"http"), "no network resources")
        let paths = html.components(separatedBy: "<path d=\"").dropFirst().filter { !$0.hasPrefix("\"") }
        #expect(paths.count >= 8, "charts have data: \(paths.count) paths")
    }

    @Test func notAResultsDirectoryIsAClearError() {
        #expect(throws: ResultsError.self) { try MergedResults.load(directories: ["/nonexistent/xmppload"]) }
        #expect(throws: ResultsError.self) { try MergedResults.load(directories: []) }
    }
}
