import ArgumentParser
import Foundation
import LoadResults

/// `xmppload compare BASELINE CANDIDATE`: judges whether a candidate server build regressed against
/// a baseline, per step and key metric, with a bootstrap confidence interval; exit 0 nothing
/// regressed (or too few runs for a verdict), 3 regressed, 4 not comparable, 2 usage.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two runs (or two sets of repeated runs): improved, regressed or no significant change.",
        discussion: """
            Examples:
              xmppload compare results/build-a results/build-b
              xmppload compare --baseline results/a1 results/a2 results/a3 --candidate results/b1 results/b2 results/b3
              xmppload compare --paired --baseline ab/round-1-baseline ab/round-2-baseline ab/round-3-baseline \\
                  --candidate ab/round-1-candidate ab/round-2-candidate ab/round-3-candidate
              xmppload compare results/build-a results/build-b --tolerance p99=5% --tolerance login.p50=10%,2ms --html compare.html
            Per step, p50/p90/p99 latency; throughput; error rate (sessions failed / started); loss; MUC
            fan-out. The 95 % interval of each change comes from a seeded bootstrap over runs (3 or more
            per side: verdicts), over intervals (fewer runs: changes and intervals shown, no verdict, exit
            0 — runs of one side cannot see run-to-run variation) or, with --paired, over rounds of
            `xmppload ab` (3 or more rounds: verdicts). A metric regressed when its whole interval lies
            beyond its tolerance (defaults: p50 and p90 10 %, p99 20 %, throughput 5 %, error_rate 1 pp,
            loss 0.1 pp, muc.fanout 1 pp) and, for latency, beyond its floor (p50 1 ms, p90 2 ms, p99
            5 ms). Runs with different profiles, load, seed or load-changing settings (--var, TLS, SASL,
            churn, reconnect, accounts, transports, endpoints), a saturated generator or a run cut short
            are refused (exit 4) unless --force.
            Exit codes: 0 nothing regressed (or no verdict: too few runs), 2 usage, 3 something regressed,
            4 not comparable.
            """
    )

    @Argument(help: "BASELINE CANDIDATE results directories (or use --baseline and --candidate).")
    var directories: [String] = []

    @Option(parsing: .upToNextOption, help: "Baseline results directories (repeated runs).")
    var baseline: [String] = []

    @Option(parsing: .upToNextOption, help: "Candidate results directories (repeated runs).")
    var candidate: [String] = []

    @Flag(help: "The runs are rounds (baseline i and candidate i ran back to back, as `xmppload ab` does): judge the per-round differences.")
    var paired = false

    @OptionGroup var judging: JudgingOptions

    @Option(help: "Seed of the bootstrap (the same seed gives the same intervals).")
    var seed: UInt64 = 1

    func validate() throws {
        var problems: [String] = []
        if directories.isEmpty {
            if baseline.isEmpty || candidate.isEmpty { problems.append("give BASELINE CANDIDATE, or --baseline DIR... and --candidate DIR...") }
        } else if directories.count != 2 || !baseline.isEmpty || !candidate.isEmpty {
            problems.append("give exactly two directories (BASELINE CANDIDATE), or --baseline DIR... and --candidate DIR..., not both")
        }
        if paired && baseline.count != candidate.count {
            problems.append("--paired needs as many --baseline as --candidate directories (one of each per round)")
        }
        problems += judging.problems()
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
    }

    func run() throws {
        let baseDirectories = directories.isEmpty ? baseline : [directories[0]]
        let candDirectories = directories.isEmpty ? candidate : [directories[1]]
        let baseRuns: [MeasuredRun]
        let candRuns: [MeasuredRun]
        do {
            baseRuns = try baseDirectories.map(MeasuredRun.load(directory:))
            candRuns = try candDirectories.map(MeasuredRun.load(directory:))
        } catch {
            FileHandle.standardError.write(Data("xmppload compare: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        try judging.judge(baseline: baseRuns, candidate: candRuns, paired: paired, seed: seed)
    }
}

/// The judging flags `compare` and `ab` share, and what both do with them: compare, print (text or
/// JSON), write the HTML, and exit 4 / 3 / 0.
struct JudgingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "What counts as a change: relative (%, or pp for rates) and/or a latency floor in ms, e.g. p99=5%, login.p50=10%,2ms, p50=3ms, error_rate=0.5 (pp); repeatable.",
            valueName: "KEY=VALUE"))
    var tolerance: [String] = []

    @Flag(help: "Judge runs that are not comparable anyway; the reasons become warnings.")
    var force = false

    @Flag(help: "Print the comparison as JSON.")
    var json = false

    @Option(help: "Also write a self-contained HTML comparison to this file.")
    var html: String?

    @Option(help: "Bootstrap resamples.")
    var resamples: Int = 1000

    func problems() -> [String] {
        var problems: [String] = []
        if resamples < 100 { problems.append("--resamples must be at least 100, got \(resamples)") }
        do { _ = try Tolerances.parse(tolerance) } catch { problems += error.problems }
        return problems
    }

    /// Compares (bootstrap seeded with `seed`), prints, writes the HTML and, when `jsonFile` is
    /// given, the JSON there too; returns the comparison when the runs are comparable and nothing
    /// regressed (exit 0), else throws exit 4 or 3.
    @discardableResult
    func judge(baseline: [MeasuredRun], candidate: [MeasuredRun], paired: Bool, seed: UInt64, jsonFile: String? = nil) throws -> Comparison {
        let comparison = Comparison.make(
            baseline: baseline, candidate: candidate, tolerances: try Tolerances.parse(tolerance),
            bootstrap: Bootstrap(resamples: resamples, seed: seed), force: force, paired: paired)
        if let html {
            try Data(CompareHTMLReport.render(comparison, baseline: baseline, candidate: candidate).utf8)
                .write(to: URL(fileURLWithPath: html), options: .atomic)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let encoded = try encoder.encode(comparison)
        if let jsonFile { try encoded.write(to: URL(fileURLWithPath: jsonFile), options: .atomic) }
        if json {
            Console.print(String(decoding: encoded, as: UTF8.self))
        } else {
            Console.print(CompareTextReport.render(comparison), terminator: "")
            if let html { Console.print("html comparison: \(html)") }
        }
        switch comparison.outcome {
        case .notComparable: throw ExitCode(ExitStatus.notComparable.rawValue)
        case .regressed: throw ExitCode(ExitStatus.regressed.rawValue)
        case .noRegression, .insufficientRuns: return comparison
        }
    }
}
