import Foundation
import Testing

@testable import LoadProfile

/// `xmppload plan`: sessions started and alive over time and expected message rates, from the schedule
/// and the profile alone.
@Suite struct PlanReportTests {
    static func definition(_ yaml: String) throws -> RunDefinition {
        try ProfileLoader.load(yaml: yaml, file: "plan.yaml")
    }

    @Test func closedChatSessionsStayAliveAndSendTheirMessagesOverTheirThinkTime() throws {
        // 10 messages 2 s apart (18 s of intervals) + a 2 s think: 20 s of activity per session.
        let definition = try Self.definition(
            """
            steps:
              - login
              - think: 2s
              - message: {to: random, count: 10, interval: 2s}
              - stay_online
            """)
        let plan = LoadPlan.closed(sessions: 100, ramp: .seconds(10), duration: .seconds(60))
        let shape = PlanReport.SessionShape(definition: definition)
        #expect(shape.messages == 10 && shape.activeSeconds == 20 && shape.staysOnline)
        let rows = PlanReport.rows(definition: definition, plan: plan, count: 6)
        #expect(rows.map(\.time) == (0...6).map { .seconds(10 * $0) })
        #expect(rows.map(\.started) == [1, 100, 100, 100, 100, 100, 100])
        #expect(rows.map(\.alive) == [1, 100, 100, 100, 100, 100, 0])
        // Each session's 10 messages spread over its 20 s: at 10 s all 100 started within the window
        // (100 × 10 / 20 = 50/s); at 20 s the one that started at 0 s is through (99 × 10 / 20).
        #expect(rows[1].messagesPerSecond == 50)
        #expect(rows[2].messagesPerSecond == 49.5)
        #expect(rows[4].messagesPerSecond == 0)
    }

    @Test func sessionsThatEndLeaveTheAliveCount() throws {
        let definition = try Self.definition("steps: [login, {think: 10s}, logout]")
        let rows = PlanReport.rows(definition: definition, plan: .open(rate: 1, duration: .seconds(40)), count: 4)
        #expect(rows.map(\.started) == [1, 11, 21, 31, 40])
        #expect(rows.map(\.alive) == [1, 10, 10, 10, 0])
    }

    @Test func foreverLoopsSendAtASustainedRate() throws {
        let definition = try Self.definition(
            """
            steps:
              - login
              - repeat: {forever: true, steps: [{think: 4s}, {message: {to: random}}]}
            """)
        let shape = PlanReport.SessionShape(definition: definition)
        #expect(shape.sustainedMessagesPerSecond == 0.25)
        let rows = PlanReport.rows(definition: definition, plan: .closed(sessions: 40, ramp: .zero, duration: .seconds(20)), count: 2)
        #expect(rows[1].alive == 40 && rows[1].messagesPerSecond == 10)
    }

    @Test func aMixWeighsItsProfiles() throws {
        let directory = try TemporaryDirectory()
        try directory.write("a.yaml", "steps: [login, {message: {to: random, count: 4}}]")
        try directory.write("b.yaml", "steps: [login, ping]")
        let mix = try directory.write("mix.yaml", "mix: [{profile: a.yaml, weight: 1}, {profile: b.yaml, weight: 3}]")
        let shape = PlanReport.SessionShape(definition: try ProfileLoader.load(path: mix))
        #expect(shape.messages == 1)
    }

    @Test func renderingShowsPhasesTableAndBars() throws {
        let definition = try Self.definition("steps: [login, {think: 30s}, logout]")
        let plan = LoadPlan(
            phases: [
                LoadPhase(name: "warm", model: .openConstant(rate: 2), duration: .seconds(30)),
                LoadPhase(name: "ramp", model: .openRamping(from: 2, to: 10), duration: .seconds(30)),
            ], seed: 9)
        let text = PlanReport.render(definition: definition, plan: plan, rows: 4)
        #expect(text.contains("  1. warm: 2/s for 30s  starts at 0s  arrivals 60\n"))
        #expect(text.contains("  2. ramp: 2/s→10/s over 30s  starts at 30s  arrivals 180\n"))
        #expect(text.contains("seed 9, graceful stop 10s"))
        #expect(text.contains("██████████████████████████████"), "the peak row has a full bar")
    }

    @Test(arguments: [(0, 10, ""), (10, 10, String(repeating: "█", count: 30)), (1, 16, "█▉"), (5, 10, String(repeating: "█", count: 15))])
    func bars(value: Int, peak: Int, expected: String) {
        #expect(PlanReport.bar(value, of: peak, width: 30) == expected)
    }
}

/// The examples in docs/PROFILES.md stay true: its profile loads and its `plan` output is what
/// `PlanReport` prints.
@Suite struct ProfilesDocumentTests {
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/PROFILES.md"), encoding: .utf8)
    }

    /// The fenced blocks that follow `opening` (e.g. "```yaml").
    static func blocks(after opening: String, in text: String) -> [String] {
        text.components(separatedBy: opening + "\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    @Test func theExampleProfileLoads() throws {
        let examples = Self.blocks(after: "```yaml", in: try Self.document()).filter { $0.contains("steps:") }
        #expect(!examples.isEmpty)
        for example in examples {
            let definition = try ProfileLoader.load(yaml: example, file: "PROFILES.md")
            #expect(definition.plan != nil)
        }
    }

    @Test func thePlanExampleIsWhatPlanPrints() throws {
        let command = "$ xmppload plan profiles/compare.yaml --rows 6\n"
        let block = try #require(Self.blocks(after: "```", in: try Self.document()).first { $0.hasPrefix(command) })
        let definition = try ProfileLoader.load(path: Self.root.appendingPathComponent("profiles/compare.yaml").path)
        let printed = PlanReport.render(definition: definition, plan: try #require(definition.plan), rows: 6)
        #expect(command + printed == block)
    }
}
