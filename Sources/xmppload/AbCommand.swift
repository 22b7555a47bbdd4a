// `xmppload ab`: runs one plan against a baseline and a candidate server in interleaved rounds (each
// run a child `xmppload run`), then judges the rounds paired, with `compare`'s verdict table,
// tolerances, refusals, exit codes and HTML.
import ArgumentParser
import Foundation
import LoadResults

#if canImport(Glibc)
import Glibc
#endif

/// `xmppload ab PROFILE --baseline-server A --candidate-server B --rounds N [run flags…] --out DIR`.
///
/// Round k runs the plan against A then B when k is odd, B then A when even, so drift of the machine
/// (another job starting, caches warming, thermal throttling) hits both sides alike. Each run is this
/// executable's `run` subcommand in a child process, with the user's run flags plus `--server`,
/// `--out DIR/round-K-baseline|candidate`, `--label` and two tags; its output goes to
/// `DIR/round-K-SIDE.log`. A password given with `--password` reaches the children through
/// `XMPPLOAD_PASSWORD`, never their argv. The rounds are then judged paired (`Comparison.make(…,
/// paired: true)`): per round the change candidate − baseline, bootstrapped over rounds. Exit codes as
/// `compare` (0, 3, 4; 2 usage), plus 1 when a run could not run and 130 when one was interrupted.
struct AbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ab",
        abstract: "Run one plan against two servers in interleaved rounds and judge the difference, paired by round.",
        discussion: """
            Example (PROFILE first, then any `run` flags; --server, --out and --label are set per run):
              xmppload ab profiles/compare.yaml --baseline-server 127.0.0.1:5222 --candidate-server 127.0.0.1:5322 \\
                  --rounds 3 --domain load.test --accounts 1-1000 --password-file pw --insecure --out results/ab
            Round 1 runs baseline then candidate, round 2 candidate then baseline, and so on; each run is
            written to DIR/round-K-baseline or DIR/round-K-candidate (its output to the same name + .log),
            the comparison to DIR/ab.json. The judgement is paired: per round, candidate − baseline (for
            latency, the percentiles of each run's merged histogram), bootstrapped over rounds, with the
            verdict table, tolerances and refusals of `compare` (a round whose generator saturated is
            refused). At least 3 rounds give verdicts; fewer show the changes without one.
            Exit codes: 0 nothing regressed (or no verdict: under 3 rounds), 1 a run could not run,
            2 usage, 3 something regressed, 4 not comparable, 130 interrupted.
            """
    )

    @Argument(help: "The profile (YAML) to run; give it first, before the run flags.")
    var profile: String

    @Option(
        name: .customLong("baseline-server"),
        help: ArgumentHelp("The baseline's server (repeat for a cluster), as run's --server.", valueName: "HOST:PORT|URL"))
    var baselineServer: [String] = []

    @Option(
        name: .customLong("candidate-server"),
        help: ArgumentHelp("The candidate's server (repeat for a cluster), as run's --server.", valueName: "HOST:PORT|URL"))
    var candidateServer: [String] = []

    @Option(help: "Rounds (each runs the plan once against each server); 3 or more for a verdict.")
    var rounds: Int = 3

    @Option(help: "Directory for the rounds' results directories, their logs and ab.json.")
    var out: String

    @Option(help: "The baseline runs' --label.")
    var baselineLabel: String = "baseline"

    @Option(help: "The candidate runs' --label.")
    var candidateLabel: String = "candidate"

    @OptionGroup var judging: JudgingOptions

    @Option(name: .customLong("bootstrap-seed"), help: "Seed of the bootstrap (--seed is the run's).")
    var bootstrapSeed: UInt64 = 1

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Flags passed to every `xmppload run` (--domain, --accounts, --sessions, --seed, …).", valueName: "run flags"))
    var runFlags: [String] = []

    /// Flags `ab` sets per run, so the user may not.
    static let reservedFlags = ["--server", "--out", "--label"]

    func validate() throws {
        var problems: [String] = []
        if baselineServer.isEmpty { problems.append("give --baseline-server HOST:PORT") }
        if candidateServer.isEmpty { problems.append("give --candidate-server HOST:PORT") }
        if rounds < 1 { problems.append("--rounds must be at least 1, got \(rounds)") }
        for flag in Self.reservedFlags where runFlags.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) {
            problems.append("\(flag) is set by ab for each run; leave it out")
        }
        if runFlags.first(where: { $0 == "--password" }) != nil, passThrough.password == nil {
            problems.append("--password needs a value")
        }
        problems += judging.problems()
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
    }

    /// The run flags without `--password VALUE` / `--password=VALUE`, and that password (it goes to
    /// the children's environment instead).
    var passThrough: (flags: [String], password: String?) {
        var flags: [String] = []
        var password: String?
        var index = 0
        while index < runFlags.count {
            let flag = runFlags[index]
            if flag == "--password" {
                if index + 1 < runFlags.count { password = runFlags[index + 1] }
                index += 2
                continue
            }
            if flag.hasPrefix("--password=") {
                password = String(flag.dropFirst("--password=".count))
            } else {
                flags.append(flag)
            }
            index += 1
        }
        return (flags, password)
    }

    /// One run of the plan: its round, side and results directory.
    struct PlannedRun {
        var round: Int
        var side: String
        var servers: [String]
        var label: String
        var directory: String
    }

    /// Round k: baseline first when k is odd, candidate first when even.
    func schedule() -> [PlannedRun] {
        (1...rounds).flatMap { round in
            let baseline = PlannedRun(
                round: round, side: "baseline", servers: baselineServer, label: baselineLabel, directory: "\(out)/round-\(round)-baseline")
            let candidate = PlannedRun(
                round: round, side: "candidate", servers: candidateServer, label: candidateLabel, directory: "\(out)/round-\(round)-candidate")
            return round % 2 == 1 ? [baseline, candidate] : [candidate, baseline]
        }
    }

    func run() throws {
        let (flags, password) = passThrough
        let overwrite = flags.contains("--overwrite")
        let plan = schedule()
        let existing = plan.filter { FileManager.default.fileExists(atPath: $0.directory) }.map(\.directory)
        if !existing.isEmpty && !overwrite {
            FileHandle.standardError.write(
                Data("xmppload ab: already there (give another --out, or --overwrite): \(existing.joined(separator: ", "))\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let executable = Self.executablePath()
        var environment = ProcessInfo.processInfo.environment
        if let password { environment["XMPPLOAD_PASSWORD"] = password }
        // With --json, stdout carries only the comparison: progress goes to stderr.
        func say(_ text: String) {
            if judging.json {
                FileHandle.standardError.write(Data((text + "\n").utf8))
            } else {
                Console.print(text)
            }
        }
        say(
            "xmppload ab: \(rounds) round\(rounds == 1 ? "" : "s"), baseline \(baselineServer.joined(separator: " ")) vs candidate \(candidateServer.joined(separator: " ")), results in \(out)"
        )
        for (index, planned) in plan.enumerated() {
            var arguments = ["run", profile] + flags
            for server in planned.servers { arguments += ["--server", server] }
            arguments += [
                "--out", planned.directory, "--label", planned.label, "--tag", "ab-round=\(planned.round)", "--tag", "ab-side=\(planned.side)",
            ]
            let log = planned.directory + ".log"
            let started = Date()
            say("run \(index + 1)/\(plan.count): round \(planned.round) \(planned.side) → \(planned.directory)")
            let status = try Self.runChild(executable: executable, arguments: arguments, environment: environment, log: log)
            let seconds = Date().timeIntervalSince(started)
            say("  exit \(status) after \(String(format: "%.1f", seconds)) s (output: \(log))")
            switch status {
            case 0, ExitStatus.thresholdsFailed.rawValue:
                // A failed threshold still wrote a complete run; `compare`'s refusals judge it.
                continue
            case ExitStatus.interrupted.rawValue:
                FileHandle.standardError.write(Data("xmppload ab: interrupted in round \(planned.round) (\(planned.side))\n".utf8))
                throw ExitCode(ExitStatus.interrupted.rawValue)
            default:
                let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(15).joined(separator: "\n")
                FileHandle.standardError.write(
                    Data("xmppload ab: round \(planned.round) (\(planned.side)) exited \(status); its output ends:\n\(tail)\n".utf8))
                throw ExitCode(status == ExitStatus.usage.rawValue ? ExitStatus.usage.rawValue : ExitStatus.failure.rawValue)
            }
        }
        let baselineRuns: [MeasuredRun]
        let candidateRuns: [MeasuredRun]
        do {
            baselineRuns = try (1...rounds).map { try MeasuredRun.load(directory: "\(out)/round-\($0)-baseline") }
            candidateRuns = try (1...rounds).map { try MeasuredRun.load(directory: "\(out)/round-\($0)-candidate") }
        } catch {
            FileHandle.standardError.write(Data("xmppload ab: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        say("")
        try judging.judge(
            baseline: baselineRuns, candidate: candidateRuns, paired: true, seed: bootstrapSeed, jsonFile: "\(out)/ab.json")
    }

    /// This executable: /proc/self/exe where it exists (Linux), else argv[0].
    static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return CommandLine.arguments[0]
    }

    /// Spawns `executable arguments` with `environment`, stdout and stderr to `log`, stdin from
    /// /dev/null, in this process group (a Ctrl-C reaches it and it stops gracefully); waits and
    /// returns its exit status (128 + N when signal N ended it).
    static func runChild(executable: String, arguments: [String], environment: [String: String], log: String) throws -> Int32 {
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
            FileHandle.standardError.write(Data("xmppload ab: cannot start \(executable): \(String(cString: strerror(spawned)))\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ExitCode(ExitStatus.failure.rawValue) }
        }
        // WIFEXITED / WEXITSTATUS by hand (the macros are not imported).
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
