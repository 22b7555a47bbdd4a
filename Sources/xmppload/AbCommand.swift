// `xmppload ab`: runs one plan against a baseline and a candidate server in interleaved rounds (each
// run a child `xmppload run`), then judges the rounds paired, with `compare`'s verdict table,
// tolerances, refusals, exit codes and HTML.
import ArgumentParser
import Foundation
import LoadResults
import LoadRunners

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
struct AbCommand: AsyncParsableCommand {
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

    @Option(
        name: .customLong("baseline-monitor"),
        help: ArgumentHelp(
            "Watch the baseline's server during its runs, as run's --monitor (repeatable); its costs (CPU per login, memory per session) are judged with the client metrics.",
            valueName: "[LABEL=]process:PID|prometheus:URL"))
    var baselineMonitor: [String] = []

    @Option(
        name: .customLong("candidate-monitor"),
        help: ArgumentHelp(
            "Watch the candidate's server during its runs, as run's --monitor (repeatable).", valueName: "[LABEL=]process:PID|prometheus:URL"))
    var candidateMonitor: [String] = []

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
        for (flag, specs) in [("--baseline-monitor", baselineMonitor), ("--candidate-monitor", candidateMonitor)] {
            problems += MonitorSource.parseAll(specs).problems.map { "\(flag): \($0.description)" }
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

    /// The comparison's runs (`ABPlan`): round k baseline first when k is odd.
    var plan: ABPlan {
        ABPlan(
            rounds: rounds, baseline: ABPlan.Side(role: "baseline", label: baselineLabel, servers: baselineServer, monitors: baselineMonitor),
            candidate: ABPlan.Side(role: "candidate", label: candidateLabel, servers: candidateServer, monitors: candidateMonitor),
            out: out)
    }

    func run() async throws {
        let (flags, password) = passThrough
        let overwrite = flags.contains("--overwrite")
        let plan = plan
        let existing = plan.schedule.filter { FileManager.default.fileExists(atPath: $0.directory) }.map(\.directory)
        if !existing.isEmpty && !overwrite {
            FileHandle.standardError.write(
                Data("xmppload ab: already there (give another --out, or --overwrite): \(existing.joined(separator: ", "))\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        if let password { environment["XMPPLOAD_PASSWORD"] = password }
        // With --json, stdout carries only the comparison: progress goes to stderr.
        let json = judging.json
        let say: @Sendable (String) -> Void = { text in
            if json {
                FileHandle.standardError.write(Data((text + "\n").utf8))
            } else {
                Console.print(text)
            }
        }
        say(
            "xmppload ab: \(rounds) round\(rounds == 1 ? "" : "s"), baseline \(baselineServer.joined(separator: " ")) vs candidate \(candidateServer.joined(separator: " ")), results in \(out)"
        )
        let launcher = ChildRunLauncher(
            executable: ChildRunLauncher.executablePath(), profile: profile, flags: flags, environment: environment)
        let runs: (baseline: [MeasuredRun], candidate: [MeasuredRun])
        do {
            runs = try await ABRunner(plan: plan, launcher: launcher, say: say).run()
        } catch let failure as ABRunner.Failure {
            FileHandle.standardError.write(Data("xmppload ab: \(failure)\n".utf8))
            switch failure {
            case .interrupted: throw ExitCode(ExitStatus.interrupted.rawValue)
            case .runFailed(_, _, let status, _):
                throw ExitCode(status == ExitStatus.usage.rawValue ? ExitStatus.usage.rawValue : ExitStatus.failure.rawValue)
            case .unreadable, .serverDown: throw ExitCode(ExitStatus.failure.rawValue)
            }
        } catch {
            FileHandle.standardError.write(Data("xmppload ab: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        say("")
        try judging.judge(
            baseline: runs.baseline, candidate: runs.candidate, paired: true, seed: bootstrapSeed, jsonFile: "\(out)/ab.json")
    }
}
