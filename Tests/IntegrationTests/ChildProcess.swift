import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with posix_spawn and reaps it with waitpid, its output going to a file.
///
/// Foundation's `Process.waitUntilExit` can miss a child's exit when several tests spawn processes
/// at once on Linux (the children stay zombies and the test hangs), so the integration tests use this.
struct ChildProcess {
    let pid: pid_t
    let logPath: String

    static func spawn(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-child-\(UUID().uuidString.prefix(8)).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The child starts with no blocked signals and default handlers, whatever the spawning thread
        // had: test and event-loop threads may block signals, and a server started under such a mask
        // ignores the SIGTERM that `local-server down` sends (it then waits 10 s and kills it).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildProcessError(message: "cannot start \(executable): \(String(cString: strerror(status)))") }
        return ChildProcess(pid: pid, logPath: logPath)
    }

    /// Waits for the exit (polling, so a time limit can apply); kills it with SIGKILL past `timeout`.
    func wait(timeout: Double, signalAfter: Double? = nil) -> Int32 {
        let start = Date()
        var signalled = false
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            let elapsed = Date().timeIntervalSince(start)
            if let signalAfter, !signalled, elapsed > signalAfter {
                kill(pid, SIGTERM)
                signalled = true
            }
            if elapsed > timeout {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                return -1
            }
            usleep(50_000)
        }
        // WIFEXITED / WEXITSTATUS by hand (macros are not imported).
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    var output: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    func removeLog() { try? FileManager.default.removeItem(atPath: logPath) }
}

struct ChildProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
