import Foundation
import LoadResults

/// Runs an `ABPlan`, one run at a time through a `RunLauncher`, and loads the rounds for judging.
///
/// A run that could not run (its launcher says so) or was interrupted stops the comparison with a
/// typed error: no round with a side missing is ever judged. A run that ran but whose side was dead
/// (no session completed its profile, or the server was unreachable — `run` exits 1) is refused the
/// same way, naming the round and side and the end of its output. So is a run that ended 0 or 99 but
/// whose server refused connections during it (`connect-refused` errors in its summary: nothing
/// listened — the server died, or restarted, mid-run): a side that was down for part of a run is
/// dead, not slower. A run that completed with a failed threshold is otherwise kept: `compare`'s
/// refusals judge it.
public struct ABRunner: Sendable {
    /// Why the comparison stopped before judging.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A run exited with `status` (not 0, 99 or 130); `tail` is the end of its output.
        case runFailed(round: Int, role: String, status: Int32, tail: String)
        /// A run ended 0 or 99, but `refused` of its connection attempts found nothing listening.
        case serverDown(round: Int, role: String, refused: UInt64)
        /// A run was interrupted (SIGINT/SIGTERM).
        case interrupted(round: Int, role: String)
        /// A run's results could not be read back.
        case unreadable(String)

        public var description: String {
            switch self {
            case .runFailed(let round, let role, let status, let tail):
                return "round \(round) (\(role)) exited \(status): that side did not run, so no round is judged; its output ends:\n\(tail)"
            case .serverDown(let round, let role, let refused):
                return
                    "round \(round) (\(role)): the server refused \(refused) connection\(refused == 1 ? "" : "s") during the run (connect-refused: it was down for part of it), so no round is judged"
            case .interrupted(let round, let role): return "interrupted in round \(round) (\(role))"
            case .unreadable(let text): return text
            }
        }
    }

    /// What launched one run: its exit status and where its output went.
    public struct Outcome: Sendable, Equatable {
        public var status: Int32
        /// A file with the run's output (stdout and stderr), if any.
        public var log: String?

        public init(status: Int32, log: String?) {
            self.status = status
            self.log = log
        }
    }

    /// Exit statuses of `xmppload run` that left a complete run to judge: 0 and 99 (a threshold failed).
    public static let judgeable: Set<Int32> = [0, 99]
    /// `xmppload run`'s exit status when interrupted.
    public static let interruptedStatus: Int32 = 130

    public let plan: ABPlan
    public let launcher: any RunLauncher
    private let say: @Sendable (String) -> Void

    public init(plan: ABPlan, launcher: any RunLauncher, say: @escaping @Sendable (String) -> Void = { _ in }) {
        self.plan = plan
        self.launcher = launcher
        self.say = say
    }

    /// Runs every planned run in order; then reads the rounds back, baseline and candidate by round.
    public func run() async throws -> (baseline: [MeasuredRun], candidate: [MeasuredRun]) {
        let schedule = plan.schedule
        for (index, planned) in schedule.enumerated() {
            let started = Date()
            say("run \(index + 1)/\(schedule.count): round \(planned.round) \(planned.side.role) → \(planned.directory)")
            let outcome = try await launcher.launch(planned)
            let seconds = Date().timeIntervalSince(started)
            say("  exit \(outcome.status) after \(String(format: "%.1f", seconds)) s" + (outcome.log.map { " (output: \($0))" } ?? ""))
            if Self.judgeable.contains(outcome.status) {
                let refused = Self.refusedConnections(directory: planned.directory)
                if refused > 0 { throw Failure.serverDown(round: planned.round, role: planned.side.role, refused: refused) }
                continue
            }
            if outcome.status == Self.interruptedStatus { throw Failure.interrupted(round: planned.round, role: planned.side.role) }
            let tail = outcome.log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }.map {
                $0.split(separator: "\n").suffix(15).joined(separator: "\n")
            }
            throw Failure.runFailed(round: planned.round, role: planned.side.role, status: outcome.status, tail: tail ?? "")
        }
        do {
            let baseline = try (1...plan.rounds).map { try MeasuredRun.load(directory: plan.directory(round: $0, side: plan.baseline)) }
            let candidate = try (1...plan.rounds).map { try MeasuredRun.load(directory: plan.directory(round: $0, side: plan.candidate)) }
            return (baseline, candidate)
        } catch {
            throw Failure.unreadable("\(error)")
        }
    }
}

extension ABRunner {
    /// The `connect-refused` errors in DIR/summary.json (0 when there is none, or no summary).
    static func refusedConnections(directory: String) -> UInt64 {
        struct Errors: Decodable { var errors: [String: UInt64]? }
        let url = URL(fileURLWithPath: ResultsDirectory(path: directory).file(ResultsDirectory.summaryFile))
        guard let data = try? Data(contentsOf: url), let summary = try? JSONDecoder().decode(Errors.self, from: data) else { return 0 }
        return summary.errors?["connect-refused"] ?? 0
    }
}

/// Runs one planned run of an `ab` comparison and says how it ended. `ChildRunLauncher` runs this
/// executable's `run` subcommand (what `xmppload ab` does); a test may run `LoadRun` in process.
public protocol RunLauncher: Sendable {
    func launch(_ planned: ABPlan.PlannedRun) async throws -> ABRunner.Outcome
}
