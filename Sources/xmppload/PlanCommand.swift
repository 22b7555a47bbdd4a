import ArgumentParser
import Foundation
import LoadProfile

/// `xmppload plan PROFILE`: prints the schedule a run would apply — phases, expected sessions started
/// and alive over time, and expected messages per second — without connecting.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the schedule of a profile's load: phases, sessions over time, messages per second.",
        discussion: """
            Examples:
              xmppload plan profiles/login-storm.yaml
              xmppload plan profiles/chat.yaml --sessions 2000 --ramp 20s --duration 90s
            """
    )

    @Argument(help: "The profile.")
    var profile: String
    @Option(help: "Closed model: virtual users.") var sessions: Int?
    @Option(help: "Closed model: ramp duration.") var ramp: String?
    @Option(help: "Open model: sessions per second.") var rate: Double?
    @Option(help: "Load duration; with the profile's own load, its cap.") var duration: String?
    @Option(help: "Seed for think times, choices and targets.") var seed: UInt64?
    @Option(help: "Rows in the time table.") var rows: Int = 12
    @Option(name: .customLong("var"), help: ArgumentHelp("Override a variable as `run --var` would (repeatable).", valueName: "KEY=VALUE"))
    var variables: [String] = []

    func validate() throws {
        guard (2...1000).contains(rows) else { throw ValidationError("--rows must be between 2 and 1000") }
    }

    func run() throws {
        var definition: RunDefinition
        do { definition = try ProfileLoader.load(path: profile) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        do { definition = try definition.overriding(VariableOverrides(parsing: variables)) } catch {
            throw ValidationError(error.description)
        }
        let plan: LoadPlan
        do {
            plan = try LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: seed).plan(over: definition.plan)
        } catch {
            throw ValidationError(error.description)
        }
        Console.print(PlanReport.render(definition: definition, plan: plan, rows: rows), terminator: "")
    }
}
