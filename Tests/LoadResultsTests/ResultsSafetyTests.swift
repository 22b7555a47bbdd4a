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

    /// A results folder this process cannot write says whose it is and what to do (a container's
    /// user and a mounted folder root owns: `:U`, chown, fsGroup), instead of "You don't have permission".
    @Test func aFolderThatCannotBeWrittenSaysWhatWorks() {
        let inContainer = ResultsDirectoryError.notWritable(
            path: "/results/r", blocking: "/results", owner: 0, mode: 0o755, uid: 10001, inContainer: true)
        #expect(
            inContainer.description
                == "cannot write the results to '/results/r': permission denied — '/results' belongs to uid 0 (mode 755) and xmppload runs as uid 10001. In a container, mount a folder this user can write: with podman add `:U` to the volume (`-v DIR:/results:U`, podman hands it to the container's user), or `chown 10001 DIR` on the host first (Kubernetes: `securityContext.fsGroup: 10001`); or write inside the container and copy the results out"
        )
        let onHost = ResultsDirectoryError.notWritable(path: "/srv/r", blocking: "/srv", owner: 0, mode: 0o755, uid: 1000, inContainer: false)
        #expect(onHost.description.hasSuffix("runs as uid 1000; choose another --out, or make that directory writable for uid 1000"))
        // A writable place (or one that is created under a writable parent) passes.
        #expect(ResultsDirectoryError.checkWritable(FileManager.default.temporaryDirectory.path + "/a/b/c") == nil)
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
