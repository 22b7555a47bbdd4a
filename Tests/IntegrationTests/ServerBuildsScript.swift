import Foundation

/// `scripts/servers` for the integration tests: real server builds side by side (docs/SERVER-BUILDS.md),
/// each test in its own directory, every build stopped by PID when the test ends.
enum ServerBuildsScript {
    static let path = LocalServer.repositoryRoot.appendingPathComponent("scripts/servers").path

    /// Runs scripts/servers with a time limit (seconds); its exit status and output.
    static func run(_ arguments: [String], timeout: Double = 300) throws -> CommandLineTests.Result {
        let child = try ChildProcess.spawn(path, arguments)
        defer { child.removeLog() }
        let status = child.wait(timeout: timeout)
        return CommandLineTests.Result(status: status, output: child.output)
    }

    /// A fresh directory (named with `prefix`) for one test's builds; every build in it is stopped
    /// (`down all`) and the directory removed when `body` ends, also when it fails.
    static func withBuilds<T>(prefix: String, _ body: (String) throws -> T) throws -> T {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(6))").path
        defer {
            _ = try? run(["down", "all", "--dir", base], timeout: 60)
            try? FileManager.default.removeItem(atPath: base)
        }
        return try body(base)
    }

    /// `up BUILD` with `accounts` accounts (and `extra` flags; `--install` unpacks a missing private
    /// root): the server.env path (the script's last line) and its KEY=value pairs.
    static func up(_ build: String, base: String, accounts: Int, extra: [String] = []) throws -> (path: String, values: [String: String]) {
        let result = try run(["up", build, "--dir", base, "--accounts", String(accounts)] + extra + ["--install"])
        guard result.status == 0, let last = result.output.split(separator: "\n").last.map(String.init),
            let text = try? String(contentsOfFile: last, encoding: .utf8)
        else { throw LocalServerError(message: "servers up \(build) failed (\(result.status)):\n\(result.output)") }
        return (last, LocalServer.keyValues(text))
    }
}
