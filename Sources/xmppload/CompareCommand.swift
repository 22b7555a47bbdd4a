import ArgumentParser
import Foundation
import LoadResults

/// `xmppload compare BASELINE CANDIDATE`: judges whether a candidate server build regressed against
/// a baseline, per step and key metric, with a bootstrap confidence interval; exit 0 nothing
/// regressed, 3 regressed, 4 not comparable, 2 usage.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two runs (or two sets of repeated runs): improved, regressed or no significant change.",
        discussion: """
            Examples:
              xmppload compare results/build-a results/build-b
              xmppload compare --baseline results/a1 results/a2 results/a3 --candidate results/b1 results/b2 results/b3
              xmppload compare results/build-a results/build-b --tolerance p99=5% --tolerance login.p50=10% --html compare.html
            Per step, p50/p90/p99 latency; throughput; error rate; loss; MUC fan-out. The 95 % interval of
            each change comes from a seeded bootstrap over intervals (one run per side) or over runs (two
            or more per side). A metric regressed when its whole interval lies beyond its tolerance
            (defaults: p50 and p90 10 %, p99 20 %, throughput 5 %, error_rate 1 pp, loss 0.1 pp,
            muc.fanout 1 pp). Runs with different profiles, load or seed, a saturated generator or a run
            cut short are refused (exit 4) unless --force.
            Exit codes: 0 nothing regressed, 2 usage, 3 something regressed, 4 not comparable.
            """
    )

    @Argument(help: "BASELINE CANDIDATE results directories (or use --baseline and --candidate).")
    var directories: [String] = []

    @Option(parsing: .upToNextOption, help: "Baseline results directories (repeated runs).")
    var baseline: [String] = []

    @Option(parsing: .upToNextOption, help: "Candidate results directories (repeated runs).")
    var candidate: [String] = []

    @Option(help: ArgumentHelp("What counts as a change, e.g. p99=5%, login.p50=10%, error_rate=0.5 (pp); repeatable.", valueName: "KEY=VALUE"))
    var tolerance: [String] = []

    @Flag(help: "Judge runs that are not comparable anyway; the reasons become warnings.")
    var force = false

    @Flag(help: "Print the comparison as JSON.")
    var json = false

    @Option(help: "Also write a self-contained HTML comparison to this file.")
    var html: String?

    @Option(help: "Bootstrap resamples.")
    var resamples: Int = 1000

    @Option(help: "Seed of the bootstrap (the same seed gives the same intervals).")
    var seed: UInt64 = 1

    func validate() throws {
        var problems: [String] = []
        if directories.isEmpty {
            if baseline.isEmpty || candidate.isEmpty { problems.append("give BASELINE CANDIDATE, or --baseline DIR... and --candidate DIR...") }
        } else if directories.count != 2 || !baseline.isEmpty || !candidate.isEmpty {
            problems.append("give exactly two directories (BASELINE CANDIDATE), or --baseline DIR... and --candidate DIR..., not both")
        }
        if resamples < 100 { problems.append("--resamples must be at least 100, got \(resamples)") }
        do { _ = try Tolerances.parse(tolerance) } catch { problems += error.problems }
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
    }

    func run() throws {
        let tolerances = try Tolerances.parse(tolerance)
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
        let comparison = Comparison.make(
            baseline: baseRuns, candidate: candRuns, tolerances: tolerances,
            bootstrap: Bootstrap(resamples: resamples, seed: seed), force: force)
        if let html {
            try Data(CompareHTMLReport.render(comparison, baseline: baseRuns, candidate: candRuns).utf8)
                .write(to: URL(fileURLWithPath: html), options: .atomic)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            Console.print(String(decoding: try encoder.encode(comparison), as: UTF8.self))
        } else {
            Console.print(CompareTextReport.render(comparison), terminator: "")
            if let html { Console.print("html comparison: \(html)") }
        }
        switch comparison.outcome {
        case .notComparable: throw ExitCode(ExitStatus.notComparable.rawValue)
        case .regressed: throw ExitCode(ExitStatus.regressed.rawValue)
        case .noRegression: return
        }
    }
}
