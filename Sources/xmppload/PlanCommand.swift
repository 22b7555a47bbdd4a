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
    @Option(help: "Load duration.") var duration: String?
    @Option(help: "Rows in the time table.") var rows: Int = 12

    func run() throws {
        let definition: RunDefinition
        do { definition = try ProfileLoader.load(path: profile) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let durationValue = try duration.map { try Self.parse($0, "--duration") }
        let plan: LoadPlan
        if let sessions {
            plan = .closed(sessions: sessions, ramp: try ramp.map { try Self.parse($0, "--ramp") } ?? .zero, duration: durationValue)
        } else if let rate {
            guard let durationValue else { throw ValidationError("--rate needs --duration") }
            plan = .open(rate: rate, duration: durationValue)
        } else if let profilePlan = definition.plan {
            plan = profilePlan
        } else {
            throw ValidationError("the profile has no `load:` section: give --sessions or --rate")
        }
        Console.print(PlanReport.render(definition: definition, plan: plan, rows: rows), terminator: "")
    }

    static func parse(_ text: String, _ flag: String) throws -> Duration {
        guard let value = DurationText.parse(text) else { throw ValidationError("\(flag): '\(text)' is not a duration") }
        return value
    }
}
