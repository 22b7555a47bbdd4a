import Foundation
import Testing

/// The image's user (uid 10001) and a results folder root owns: `run --out` says what works instead
/// of "You don't have permission", and exits 2 before connecting anywhere. Run as that uid with
/// setpriv (the tests run as root); `KUBERNETES_SERVICE_HOST` makes the binary see a container.
@Suite struct ResultsPermissionTests {
    @Test(.timeLimit(.minutes(2)), .enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: "/usr/bin/setpriv")))
    func aRootOwnedResultsFolderSaysWhatWorks() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-rootowned-\(UUID().uuidString.prefix(6))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let child = try ChildProcess.spawn(
            "/usr/bin/setpriv",
            [
                "--reuid=10001", "--regid=10001", "--clear-groups", "/usr/bin/env", "KUBERNETES_SERVICE_HOST=10.0.0.1",
                CommandLineTests.binary, "run", LocalServer.repositoryRoot.path + "/profiles/login.yaml", "--server", "127.0.0.1:1",
                "--domain", "load.test", "--accounts", "1-2", "--password", "x", "--sessions", "1", "--duration", "2s", "--plain",
                "--out", folder + "/r",
            ])
        defer { child.removeLog() }
        let status = child.wait(timeout: 60)
        #expect(status == 2, "\(child.output)")
        #expect(
            child.output.contains(
                "xmppload: cannot write the results to '\(folder)/r': permission denied — '\(folder)' belongs to uid 0 (mode 755) and xmppload runs as uid 10001"
            ), "\(child.output)")
        #expect(child.output.contains("`-v DIR:/results:U`") && child.output.contains("chown 10001 DIR"), "\(child.output)")
        #expect(!child.output.contains("You don't have permission"), "\(child.output)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/r"))
    }
}
