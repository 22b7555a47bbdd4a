import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import LoadRunners

// `xmppload capacity`: finds the largest load that meets every --slo rule, one load run per step.

/// `xmppload capacity PROFILE --slo RULE…`: runs steps of growing load (arrival rate for an open
/// profile, sessions for a closed one), each its own `LoadRun` judged on its own histograms after
/// its warm-up, as `CapacitySearch` asks, and reports the knee and the rule that bounds it.
struct CapacityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capacity",
        abstract: "Find the largest load that meets every service-level rule (the SLO knee).",
        discussion: """
            Examples:
              xmppload capacity profiles/login.yaml --slo 'login.p99 < 300ms' \\
                  --slo 'errors.rate < 1%' --server 127.0.0.1:5222 \\
                  --domain load.test --accounts 1-5000 --password-file pw \\
                  --start 10 --max 400 --step-duration 30s

            The load searched follows the profile's load model: logins/s for an
            open model (or a profile without `load:`), sessions for a closed one.
            Steps grow ×2 from --start until one fails a rule, then bisect
            between the last pass and the first fail to --resolution; the knee
            is run once more to confirm it (a failed repeat steps down). Each
            step runs --warmup (not judged), then --step-duration judged on the
            step's own histograms. Latency past 5× a rule's limit (overload) or
            most sessions failing (collapse) cuts a step short; nothing above it
            is tried. A step whose generator saturated or dropped arrivals is
            refused: the generator, not the server, is the limit.
            --out holds summary.json (`capacity`), intervals.jsonl (every step's
            intervals, tagged `step`), report.html (the knee chart) and
            steps/NN-LOAD/ (each step's run). The run flags (--server, --domain,
            --accounts, --tls, …) mean what they mean for `run`.
            Several generators: --segment i/N with one absolute --start-at on
            each climbs one ladder (×--ladder-ratio per step, no bisect, step k
            at the same time everywhere); `xmppload report DIR…` on their
            directories merges the steps and finds the knee. See
            docs/CAPACITY.md.
            Exit codes:
              0    a capacity was found (or every step up to --max passed)
              1    even the first step failed its rules, or a step could not run
              2    usage or profile error (every problem listed)
              4    the generator was the limit, not the server
              130  interrupted (SIGINT/SIGTERM); the steps so far were written
            """
    )

    @Argument(help: "The profile (YAML) to search with.")
    var profile: String

    @Option(
        name: .customLong("slo"),
        help: ArgumentHelp(
            "A service-level rule every step must meet (repeatable; the threshold grammar), e.g. 'login.p99 < 300ms', 'errors.rate < 1%', 'message.p99 < 200ms'.",
            valueName: "rule"))
    var slo: [String] = []

    @Option(help: "The first step's load: logins/s (open model, default 5) or sessions (closed model, default 50).")
    var start: Double?

    @Option(help: "The highest load tried: logins/s (default 1000) or sessions (default: the number of accounts).")
    var max: Double?

    @Option(help: "How long each step is held and judged, after its warm-up (e.g. 30s).")
    var stepDuration: String = "30s"

    @Option(help: "Each step's own warm-up, excluded from its judgment (e.g. 5s); a closed model ramps its sessions over it.")
    var warmup: String = "5s"

    @Option(help: "Stop bisecting when the last pass and the first fail are this close (relative to the pass), e.g. 5%.")
    var resolution: String = "5%"

    @Option(
        help:
            "With --segment: the ladder every generator climbs, ×R per step from --start (default 1.25); the capacity is resolved to R (generators cannot agree on a bisect)."
    )
    var ladderRatio: Double = 1.25

    @OptionGroup var flags: RunFlags

    func run() async throws {
        MallocTuning.apply()
        let environment = try ConnectionDefaults.load(file: flags.serverEnv)
        let loaded: RunDefinition
        do {
            loaded = try ProfileLoader.load(path: profile)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let setup = try resolve(environment: environment, definition: loaded)
        var configuration = setup.options.configuration
        if configuration.endpoints.isEmpty {
            try await RunCommand.discoverEndpoints(into: &configuration, dns: flags.dns)
        }
        if let startAt = configuration.startAt, startAt.timeIntervalSinceNow > 0 {
            let wait = startAt.timeIntervalSinceNow
            FileHandle.standardError.write(
                Data("xmppload: waiting \(Int(wait.rounded())) s for --start-at \(RunOptionsResolver.rfc3339(startAt))\n".utf8))
            try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
        }
        let output = ResultsDirectory(path: configuration.outputDirectory)
        do {
            try output.create(overwrite: flags.overwrite)
        } catch let error as ResultsDirectoryError {
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let runner = CapacityRunner(
            setup: setup, configuration: configuration, directory: output,
            profileName: setup.options.definition.profiles.map(\.profile.name).joined(separator: "+"), say: { Console.print($0) })
        let signals = SignalTrap(signals: [SIGINT, SIGTERM]) { runner.requestStop() }
        defer { signals.cancel() }
        let result: CapacityResult
        do {
            result = try await runner.search()
        } catch let failure as CapacityRunner.StepFailure {
            FileHandle.standardError.write(Data("xmppload: \(failure)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        Console.print("")
        Console.print(result.table(), terminator: "")
        Console.print(result.headline)
        if let kneeLine = result.kneeLine { Console.print(kneeLine) }
        for note in result.notes { Console.print("note: \(note)") }
        Console.print("results: \(output.path) (summary.json, intervals.jsonl, report.html, steps/)")
        if runner.interrupted { throw ExitCode(ExitStatus.interrupted.rawValue) }
        switch result.kind {
        case "found", "reached-max": return
        case "generator-limited": throw ExitCode(ExitStatus.notComparable.rawValue)
        default: throw ExitCode(ExitStatus.failure.rawValue)
        }
    }

    func resolve(environment: ConnectionDefaults, definition: RunDefinition) throws -> CapacitySetup {
        var problems: [String] = []
        if slo.isEmpty { problems.append("--slo RULE is required (e.g. --slo 'login.p99 < 300ms'); repeat it for several rules") }
        var thresholds: [Threshold] = []
        for text in slo {
            do {
                thresholds.append(try Threshold.parse(text))
            } catch {
                problems += error.problems.map { "--slo '\(text)': \($0)" }
            }
        }
        let catalog = MetricCatalog(definition)
        for threshold in thresholds {
            if let problem = catalog.problem(with: threshold) { problems.append("--slo '\(threshold.text)': \(problem.message) (\(problem.hint))") }
            if threshold.isTrend { problems.append("--slo '\(threshold.text)': a trend needs a long run; a capacity step judges levels, not slopes") }
        }
        let segmented = flags.segment.map { $0 != "0/1" } ?? false
        if segmented {
            // Generators of one search climb the same ladder at the same times: step k starts at
            // --start-at + k × slot on every one of them.
            if flags.startAt == nil || flags.startAt?.hasPrefix("+") == true {
                problems.append(
                    "--segment needs an absolute --start-at (RFC 3339, the same on every generator): each step of the ladder starts at the same time on all of them"
                )
            }
            if !(ladderRatio > 1.01 && ladderRatio <= 4) { problems.append("--ladder-ratio must be above 1.01 and at most 4, got \(ladderRatio)") }
        }
        let dimension: CapacityDimension = (definition.plan?.phases.first.map { !$0.model.isOpen } ?? false) ? .sessions : .arrivalRate
        let holdValue = LoadFlags.duration(stepDuration, flag: "--step-duration", problems: &problems)
        let warmupValue = LoadFlags.duration(warmup, flag: "--warmup", problems: &problems)
        if let holdValue, holdValue < .seconds(1) { problems.append("--step-duration must be at least 1s, got '\(stepDuration)'") }
        // `5%` or a bare fraction (`0.05`).
        let resolutionValue = PercentText.parse(resolution).map(\.fraction).flatMap { $0 > 0 && $0 < 1 ? $0 : nil }
        if resolutionValue == nil { problems.append("--resolution must be a percentage above 0 and below 100 (e.g. 5%), got '\(resolution)'") }
        let startValue = start ?? (dimension == .arrivalRate ? 5 : 50)
        if !(startValue > 0 && startValue.isFinite) { problems.append("--start must be greater than 0, got \(startValue)") }
        if dimension == .sessions && startValue.rounded() < 1 { problems.append("--start must be at least 1 session") }
        // Resolve the run flags as `run` does, with the first step's load (so every run-flag rule applies).
        let total = (holdValue ?? .seconds(30)) + (warmupValue ?? .zero)
        let load =
            dimension == .arrivalRate
            ? LoadFlags(rate: startValue, duration: DurationText.format(total), seed: flags.seed)
            : LoadFlags(sessions: Swift.max(1, Int(startValue.rounded())), ramp: nil, duration: DurationText.format(total), seed: flags.seed)
        var options: ResolvedRun?
        do {
            options = try RunCommand.resolve(flags.options(load: load), environment: environment, definition: definition)
        } catch let error as ValidationError {
            problems.append(error.message)
        }
        let accountCount = options?.configuration.accounts.count ?? 0
        let maxValue = max ?? (dimension == .arrivalRate ? 1000 : Double(Swift.max(accountCount, 1)))
        if maxValue < startValue { problems.append("--max (\(maxValue)) is below --start (\(startValue))") }
        if dimension == .sessions && maxValue > Double(accountCount) && accountCount > 0 {
            problems.append("--max \(Int(maxValue)) sessions is more than the \(accountCount) accounts of --accounts")
        }
        guard problems.isEmpty, var options, let holdValue, let warmupValue, let resolutionValue else {
            throw ValidationError(problems.joined(separator: "\n"))
        }
        let interval = CapacitySetup.stepInterval(flag: options.configuration.interval, hold: holdValue)
        options.configuration.interval = interval
        options.configuration.interactive = false
        let profileName = options.definition.profiles.first?.profile.name ?? "run"
        options.configuration.outputDirectory = flags.out ?? "results/\(RunIdentifier.timestamp())-capacity-\(profileName)"
        let settings = CapacitySearch.Settings(
            start: dimension == .sessions ? startValue.rounded() : startValue, max: maxValue, resolution: resolutionValue,
            integral: dimension == .sessions, growth: segmented ? ladderRatio : 2, bisects: !segmented)
        return CapacitySetup(
            options: options, rules: thresholds, dimension: dimension, settings: settings,
            warmup: warmupValue, hold: holdValue, interval: interval, seed: options.plan.seed,
            gracefulStop: definition.plan?.gracefulStop ?? .seconds(10))
    }
}
