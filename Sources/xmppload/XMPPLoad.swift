import ArgumentParser
import Foundation

/// The `xmppload` command line: one sub-command per file.
///
/// Exit codes (`ExitStatus`): 0 the command completed; 1 it could not run; 2 usage or profile
/// error (argument-parser's own 64 for usage errors is mapped to 2, as the README promises).
@main
struct XMPPLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xmppload",
        abstract: "Load and soak testing for XMPP servers.",
        subcommands: [RunCommand.self, CheckCommand.self, PlanCommand.self, ReportCommand.self, ProvisionCommand.self]
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
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
    /// Thresholds failed (the run itself completed).
    case thresholdsFailed = 99
}
