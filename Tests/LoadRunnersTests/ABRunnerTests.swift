import Foundation
import LoadResults
import Synchronization
import Testing

@testable import LoadRunners

/// `ab`'s rounds as library values: the interleaved schedule, and what the runner does with each
/// way a run can end — without the binary and without a server (a scripted launcher stands in for
/// the runs; what a real run writes is tested against Prosody in IntegrationTests).
@Suite struct ABRunnerTests {
    static let baseline = ABPlan.Side(role: "baseline", label: "prosody-0.12", servers: ["127.0.0.1:5222"])
    static let candidate = ABPlan.Side(role: "candidate", label: "prosody-13", servers: ["127.0.0.1:5322", "127.0.0.1:5323"])

    @Test(arguments: [
        (1, ["1 baseline", "1 candidate"]),
        (2, ["1 baseline", "1 candidate", "2 candidate", "2 baseline"]),
        (3, ["1 baseline", "1 candidate", "2 candidate", "2 baseline", "3 baseline", "3 candidate"]),
        (0, []),
    ])
    func roundsAlternateWhichSideRunsFirst(rounds: Int, expected: [String]) {
        let plan = ABPlan(rounds: rounds, baseline: Self.baseline, candidate: Self.candidate, out: "/r/ab")
        #expect(plan.schedule.map { "\($0.round) \($0.side.role)" } == expected)
        #expect(plan.schedule.allSatisfy { $0.directory == "/r/ab/round-\($0.round)-\($0.side.role)" })
    }

    @Test func aChildRunGetsTheSidesServersItsDirectoryLabelAndTags() {
        let launcher = ChildRunLauncher(executable: "/bin/xmppload", profile: "p.yaml", flags: ["--sessions", "5"], environment: [:])
        let planned = ABPlan(rounds: 1, baseline: Self.baseline, candidate: Self.candidate, out: "o").schedule[1]
        #expect(
            launcher.arguments(planned) == [
                "run", "p.yaml", "--sessions", "5", "--server", "127.0.0.1:5322", "--server", "127.0.0.1:5323", "--out", "o/round-1-candidate",
                "--label", "prosody-13", "--tag", "ab-round=1", "--tag", "ab-side=candidate",
            ])
    }

    /// Answers each planned run with a scripted exit status (0 by default) and logs the order.
    final class ScriptedLauncher: RunLauncher {
        let statuses: [String: Int32]
        let launched = Mutex<[String]>([])
        let logDirectory: String

        init(statuses: [String: Int32], logDirectory: String) {
            self.statuses = statuses
            self.logDirectory = logDirectory
        }

        func launch(_ planned: ABPlan.PlannedRun) async throws -> ABRunner.Outcome {
            let key = "\(planned.round) \(planned.side.role)"
            launched.withLock { $0.append(key) }
            let log = "\(logDirectory)/round-\(planned.round)-\(planned.side.role).log"
            try "line one\nsessions failed: every login refused\n".write(toFile: log, atomically: true, encoding: .utf8)
            return ABRunner.Outcome(status: statuses[key] ?? 0, log: log)
        }
    }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-ab-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A side that did not run (the server was dead: `run` exits 1) stops the comparison there: no
    /// later run starts and nothing is judged; the error names the round, the side and the output.
    @Test func aDeadSideIsRefusedNotJudged() async throws {
        let out = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let launcher = ScriptedLauncher(statuses: ["2 candidate": 1], logDirectory: out)
        let plan = ABPlan(rounds: 3, baseline: Self.baseline, candidate: Self.candidate, out: out)
        await #expect(throws: ABRunner.Failure.self) { try await ABRunner(plan: plan, launcher: launcher).run() }
        do {
            _ = try await ABRunner(plan: plan, launcher: ScriptedLauncher(statuses: ["2 candidate": 1], logDirectory: out)).run()
        } catch let failure as ABRunner.Failure {
            guard case .runFailed(let round, let role, let status, let tail) = failure else {
                Issue.record("expected runFailed, got \(failure)")
                return
            }
            #expect(round == 2 && role == "candidate" && status == 1)
            #expect(tail.contains("every login refused"))
            #expect(failure.description.contains("no round is judged"))
        }
        #expect(launcher.launched.withLock { $0 } == ["1 baseline", "1 candidate", "2 candidate"])
    }

    /// A run whose server died (or restarted) mid-run can still end 0 or 99 — the sessions before the
    /// death completed — but its summary counts `connect-refused` errors: that side was dead for part
    /// of the round, so the comparison stops there and nothing is judged. Other errors (a slower,
    /// failing server) do not stop it.
    @Test(arguments: [
        (["connect-refused": 25, "stream-system-shutdown": 3], Int32(99), UInt64(25)),
        (["connect-refused": 1], Int32(0), UInt64(1)),
        (["connect-timeout": 4, "stream-system-shutdown": 3], Int32(0), UInt64(0)),
    ])
    func aSideWhoseServerRefusedConnectionsMidRunIsRefused(errors: [String: UInt64], status: Int32, refused: UInt64) async throws {
        let out = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let plan = ABPlan(rounds: 3, baseline: Self.baseline, candidate: Self.candidate, out: out)
        let died = plan.directory(round: 3, side: Self.candidate)
        try FileManager.default.createDirectory(atPath: died, withIntermediateDirectories: true)
        let summary = try JSONSerialization.data(withJSONObject: ["stop_reason": "completed", "errors": errors])
        try summary.write(to: URL(fileURLWithPath: died + "/summary.json"))
        let launcher = ScriptedLauncher(statuses: ["3 candidate": status], logDirectory: out)
        do {
            _ = try await ABRunner(plan: plan, launcher: launcher).run()
            Issue.record("expected a failure")
        } catch let failure as ABRunner.Failure {
            if refused > 0 {
                #expect(failure == .serverDown(round: 3, role: "candidate", refused: refused))
                #expect(failure.description.contains("no round is judged"))
            } else {
                // Judged as far as the runner goes: it only fails on reading the runs back (the
                // scripted launcher writes no results), never on the errors.
                guard case .unreadable = failure else {
                    Issue.record("expected unreadable, got \(failure)")
                    return
                }
            }
        }
        #expect(launcher.launched.withLock { $0 }.count == 6)
    }

    @Test func anInterruptedRunStopsTheComparison() async throws {
        let out = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let plan = ABPlan(rounds: 2, baseline: Self.baseline, candidate: Self.candidate, out: out)
        let launcher = ScriptedLauncher(statuses: ["1 candidate": 130], logDirectory: out)
        await #expect(throws: ABRunner.Failure.interrupted(round: 1, role: "candidate")) {
            try await ABRunner(plan: plan, launcher: launcher).run()
        }
    }

    /// Every run ended 0 or 99, but a results directory is missing: nothing is judged either.
    @Test func runsThatLeftNoResultsAreUnreadable() async throws {
        let out = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let plan = ABPlan(rounds: 1, baseline: Self.baseline, candidate: Self.candidate, out: out)
        let launcher = ScriptedLauncher(statuses: ["1 baseline": 99], logDirectory: out)
        await #expect {
            try await ABRunner(plan: plan, launcher: launcher).run()
        } throws: { error in
            guard case .unreadable = error as? ABRunner.Failure else { return false }
            return true
        }
        #expect(launcher.launched.withLock { $0 } == ["1 baseline", "1 candidate"])
    }
}
