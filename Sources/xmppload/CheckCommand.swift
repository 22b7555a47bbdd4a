import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadRunners

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
              xmppload check mix.yaml --var tcp=xmpp.example:5222
            Checks each profile's `thresholds:` and every --threshold the same way `run` would, and
            with `servers:` in the file, its entries after --var and that every profile's `transport:`
            has an endpoint there.
            Exit codes: 0 all profiles are valid, 2 at least one problem.
            """
    )

    @Argument(help: "Profile files.")
    var profiles: [String]

    @Option(name: .customLong("threshold"), help: ArgumentHelp("A threshold to validate as `run --threshold` would (repeatable).", valueName: "rule"))
    var thresholds: [String] = []

    @Option(
        name: .customLong("var"),
        help: ArgumentHelp("Override a variable as `run --var` would (repeatable; every file must define it).", valueName: "KEY=VALUE"))
    var variables: [String] = []

    func run() throws {
        var problems = 0
        var flagProblems: [String] = []
        let flagThresholds = RunOptionsResolver.parseThresholds(thresholds, problems: &flagProblems)
        var overrides = VariableOverrides.none
        do { overrides = try VariableOverrides(parsing: variables) } catch { flagProblems += error.messages }
        if !flagProblems.isEmpty {
            problems += flagProblems.count
            FileHandle.standardError.write(Data((flagProblems.joined(separator: "\n") + "\n").utf8))
        }
        for path in profiles {
            do throws(ProfileErrors) {
                var definition = try ProfileLoader.load(path: path)
                do {
                    definition = try definition.overriding(overrides)
                } catch {
                    let start = SourceLocation(file: path, line: 1, column: 1)
                    throw ProfileErrors(problems: error.messages.map { ProfileProblem(location: start, message: $0) })
                }
                // The servers as `run` would read them, after --var; each transport must find one.
                _ = try definition.serverEndpoints()
                let transportProblems = ProfileEndpoints.problems(of: definition)
                guard transportProblems.isEmpty else { throw ProfileErrors(problems: transportProblems) }
                // A --threshold on a metric this profile cannot record is a problem of this file.
                let metricProblems = RunOptionsResolver.thresholdMetricProblems(flagThresholds, definition: definition)
                guard metricProblems.isEmpty else {
                    let start = SourceLocation(file: path, line: 1, column: 1)
                    throw ProfileErrors(problems: metricProblems.map { ProfileProblem(location: start, message: $0) })
                }
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
