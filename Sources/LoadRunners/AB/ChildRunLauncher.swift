import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Launches each run of an `ab` comparison as a child `xmppload run`: the user's run flags plus
/// `--server` (one per server of the side), `--out DIR/round-K-SIDE`, `--label` and the tags
/// `ab-round=K` and `ab-side=SIDE`; its output goes to `DIR/round-K-SIDE.log`. A password reaches the
/// children through `environment` (`XMPPLOAD_PASSWORD`), never their argv. The child runs in this
/// process group, so a Ctrl-C reaches it and it stops gracefully.
public struct ChildRunLauncher: RunLauncher {
    public var executable: String
    public var profile: String
    public var flags: [String]
    public var environment: [String: String]

    public init(executable: String, profile: String, flags: [String], environment: [String: String]) {
        self.executable = executable
        self.profile = profile
        self.flags = flags
        self.environment = environment
    }

    /// The `run` arguments of `planned`.
    public func arguments(_ planned: ABPlan.PlannedRun) -> [String] {
        var arguments = ["run", profile] + flags
        for server in planned.side.servers { arguments += ["--server", server] }
        for monitor in planned.side.monitors { arguments += ["--monitor", monitor] }
        arguments += [
            "--out", planned.directory, "--label", planned.side.label, "--tag", "ab-round=\(planned.round)", "--tag",
            "ab-side=\(planned.side.role)",
        ]
        return arguments
    }

    public func launch(_ planned: ABPlan.PlannedRun) async throws -> ABRunner.Outcome {
        let log = planned.directory + ".log"
        let (executable, arguments, environment) = (executable, arguments(planned), environment)
        // The child runs for minutes: wait for it on a thread of its own, not on the concurrency pool.
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            Thread {
                continuation.resume(
                    with: Result { try Self.runChild(executable: executable, arguments: arguments, environment: environment, log: log) })
            }.start()
        }
        return ABRunner.Outcome(status: status, log: log)
    }

    /// A child that could not be started.
    public struct SpawnFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// This executable: /proc/self/exe where it exists (Linux), else argv[0].
    public static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return CommandLine.arguments[0]
    }

    /// Spawns `executable arguments` with `environment`, stdout and stderr to `log`, stdin from
    /// /dev/null, in this process group; waits and returns its exit status (128 + N when signal N
    /// ended it).
    public static func runChild(executable: String, arguments: [String], environment: [String: String], log: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw SpawnFailure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw SpawnFailure(description: "lost track of \(executable) (waitpid: \(String(cString: strerror(errno))))")
            }
        }
        // WIFEXITED / WEXITSTATUS by hand (the macros are not imported).
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
