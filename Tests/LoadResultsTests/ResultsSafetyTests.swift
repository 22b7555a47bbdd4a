import Foundation
import Testing

@testable import LoadResults

/// No secret in stored command lines; no run mixed into another's directory; nothing lost to a full disk.
@Suite struct ResultsSafetyTests {
    @Test(arguments: [
        (
            ["xmppload", "run", "p.yaml", "--password", "hunter2", "--domain", "d"],
            ["xmppload", "run", "p.yaml", "--password", "<redacted>", "--domain", "d"]
        ),
        (["xmppload", "run", "--password=hunter2"], ["xmppload", "run", "--password=<redacted>"]),
        (["xmppload", "run", "--password-file", "/run/secret"], ["xmppload", "run", "--password-file", "/run/secret"]),
        (["xmppload", "run", "--password"], ["xmppload", "run", "--password"]),
        (["xmppload", "plan", "p.yaml"], ["xmppload", "plan", "p.yaml"]),
    ])
    func redaction(_ argv: [String], _ expected: [String]) {
        #expect(CommandLineRedaction.redact(argv) == expected)
        #expect(!CommandLineRedaction.redact(argv).joined(separator: " ").contains("hunter2"))
    }

    static func temporaryDirectory() -> ResultsDirectory {
        ResultsDirectory(
            path: FileManager.default.temporaryDirectory
                .appendingPathComponent("xmppload-results-\(UUID().uuidString.prefix(8))").path)
    }

    @Test func aDirectoryHoldingARunIsRefusedUnlessOverwriting() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.create()
        #expect(!directory.holdsRun)
        let writer = try IntervalLogWriter(directory: directory)
        try writer.append(IntervalSnapshot(start: 0, end: 1))
        #expect(directory.holdsRun)
        #expect(throws: ResultsDirectoryError.holdsRun(directory.path)) { try directory.create() }
        try directory.create(overwrite: true)
        #expect(!directory.holdsRun)
        #expect(try IntervalLogWriter(directory: directory).pendingLines == 0)
        #expect(try directory.readIntervals().isEmpty)
    }

    /// /dev/full fails every write with ENOSPC, as a full disk does.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFullDiskDoesNotEndTheRunAndKeepsABoundedBacklog() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.create()
        try FileManager.default.createSymbolicLink(
            atPath: directory.file(ResultsDirectory.intervalsFile),
            withDestinationPath: "/dev/full")
        let writer = try IntervalLogWriter(directory: directory)
        for second in 0..<(IntervalLogWriter.maxPendingLines + 5) {
            try writer.append(IntervalSnapshot(start: Double(second), end: Double(second + 1)))
        }
        #expect(writer.failedWrites == IntervalLogWriter.maxPendingLines + 5)
        #expect(writer.pendingLines == IntervalLogWriter.maxPendingLines)
        #expect(writer.droppedLines == 5)
        #expect(writer.lastError != nil)
        #expect(!writer.flush())
    }

    @Test func theSpaceReserveIsSetAsideAndReleasedWithTheReport() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.create()
        let reserve = directory.file(ResultsDirectory.reserveFile)
        let size = try FileManager.default.attributesOfItem(atPath: reserve)[.size] as? Int
        #expect(size == ResultsDirectory.reserveBytes)
        try directory.writeReport("<html></html>")
        #expect(!FileManager.default.fileExists(atPath: reserve))
    }
}
