import ArgumentParser
import Foundation
import LoadResults

/// The `xmppload` command line: one sub-command per file.
///
/// Exit codes (`ExitStatus`): 0 the command completed; 1 it could not run; 2 usage or profile
/// error (argument-parser's own 64 for usage errors is mapped to 2, as the README promises).
@main
struct XMPPLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xmppload",
        abstract: "Load and soak testing for XMPP servers.",
        discussion: """
            Exit codes:
              0    success (run: the load ran and every threshold passed)
              1    the command could not do its job (run: no session completed its
                   profile, the server was unreachable at start, results could not
                   be written)
              2    usage or profile error (every problem listed)
              3, 4 compare, ab: a metric regressed / the runs are not comparable;
                   capacity (4): the generator, not the server, was the limit
                   (0 with too few runs or rounds for a verdict: the changes are
                   shown, not judged)
              99   run: a threshold failed
              130  run: interrupted (SIGINT/SIGTERM)
            """,
        version: "xmppload \(RunManifest.currentToolVersion)",
        subcommands: [
            RunCommand.self, CapacityCommand.self, CheckCommand.self, PlanCommand.self, ReportCommand.self, CompareCommand.self, AbCommand.self,
            ProvisionCommand.self, ProbeCommand.self, ControlCommand.self,
        ]
    )

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

/// The process exit codes of every sub-command.
///
/// One table for the whole tool, so no two meanings share a code. `run`: 0, 1, 2, 99, 130.
/// `compare`: 0 nothing regressed, 2, 3, 4.
enum ExitStatus: Int32 {
    case success = 0
    /// The command could not do its job: the server was unreachable at start, no session logged in,
    /// results could not be written.
    case failure = 1
    /// Usage or profile error (every problem listed).
    case usage = 2
    /// `compare`: at least one metric regressed beyond its tolerance.
    case regressed = 3
    /// `compare`: the runs are not comparable (different profile or load, saturated generator, a run
    /// cut short) and `--force` was not given.
    case notComparable = 4
    /// `run`: a threshold failed (the run itself completed, or was aborted by `--abort-on-fail`).
    case thresholdsFailed = 99
    /// `run`: SIGINT/SIGTERM cut the run short; the results gathered so far were written.
    case interrupted = 130
}
