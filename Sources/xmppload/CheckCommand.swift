import ArgumentParser
import Foundation
import LoadProfile

/// `xmppload check PROFILE...`: validates profiles without connecting. Prints every problem of every
/// file (file:line:column, message, hint) and exits 2 when there is any; prints `ok` per clean file.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate profiles without connecting (every problem at once, with file:line:column).",
        discussion: """
            Example:
              xmppload check profiles/*.yaml
              xmppload check profiles/soak.yaml --threshold 'login.p99 < 800ms over 10m'
            Checks each profile's `thresholds:` and every --threshold the same way `run` would, and
            with `servers:` in the file, that every profile's `transport:` has an endpoint there.
            Exit codes: 0 all profiles are valid, 2 at least one problem.
            """
    )

    @Argument(help: "Profile files.")
    var profiles: [String]

    @Option(name: .customLong("threshold"), help: ArgumentHelp("A threshold to validate as `run --threshold` would (repeatable).", valueName: "rule"))
    var thresholds: [String] = []

    func run() throws {
        var problems = 0
        var flagProblems: [String] = []
        _ = RunCommand.parseThresholds(thresholds, problems: &flagProblems)
        if !flagProblems.isEmpty {
            problems += flagProblems.count
            FileHandle.standardError.write(Data((flagProblems.joined(separator: "\n") + "\n").utf8))
        }
        for path in profiles {
            do throws(ProfileErrors) {
                let definition = try ProfileLoader.load(path: path)
                // With `servers:` in the file, each profile's transport must find an endpoint there.
                let transportProblems = ProfileEndpoints.problems(of: definition)
                guard transportProblems.isEmpty else { throw ProfileErrors(problems: transportProblems) }
                let names = definition.profiles.map(\.profile.name).joined(separator: ", ")
                let steps = definition.profiles.map { $0.profile.steps.count }.reduce(0, +)
                let rules =
                    definition.thresholds.isEmpty ? "" : "; \(definition.thresholds.count) threshold\(definition.thresholds.count == 1 ? "" : "s")"
                let servers = definition.servers.isEmpty ? "" : "; \(definition.servers.count) server\(definition.servers.count == 1 ? "" : "s")"
                Console.print("ok   \(path) (\(names); \(steps) steps\(definition.plan.map { "; load: \($0.summary)" } ?? "")\(rules)\(servers))")
            } catch {
                problems += error.problems.count
                FileHandle.standardError.write(Data((error.problems.map(\.description).joined(separator: "\n") + "\n").utf8))
            }
        }
        if problems > 0 {
            FileHandle.standardError.write(Data("\(problems) problem\(problems == 1 ? "" : "s") found\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}
