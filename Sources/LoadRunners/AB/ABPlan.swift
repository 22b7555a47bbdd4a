/// The runs of an `ab` comparison: `rounds` rounds, each running the same plan once against the
/// baseline and once against the candidate. Round k runs the baseline first when k is odd and the
/// candidate first when k is even, so drift of the machine (another job starting, caches warming,
/// thermal throttling) hits both sides alike. A pure value: tests check the schedule as a table.
public struct ABPlan: Sendable, Equatable {
    /// One side of the comparison: its label, its servers (as `run`'s `--server`, repeatable) and
    /// what watches them (as `run`'s `--monitor`: each side's own server process or endpoint).
    public struct Side: Sendable, Equatable {
        /// `baseline` or `candidate` (the `ab-side` tag and the directory names).
        public var role: String
        public var label: String
        public var servers: [String]
        public var monitors: [String]

        public init(role: String, label: String, servers: [String], monitors: [String] = []) {
            self.role = role
            self.label = label
            self.servers = servers
            self.monitors = monitors
        }
    }

    /// One run of the plan: its round (1-based), side and results directory.
    public struct PlannedRun: Sendable, Equatable {
        public var round: Int
        public var side: Side
        public var directory: String
    }

    public var rounds: Int
    public var baseline: Side
    public var candidate: Side
    /// Where the rounds' results directories (and their logs, and `ab.json`) go.
    public var out: String

    public init(rounds: Int, baseline: Side, candidate: Side, out: String) {
        self.rounds = rounds
        self.baseline = baseline
        self.candidate = candidate
        self.out = out
    }

    /// Every run in order: round k baseline then candidate when k is odd, the other way when even.
    public var schedule: [PlannedRun] {
        guard rounds > 0 else { return [] }
        return (1...rounds).flatMap { round in
            let first = PlannedRun(round: round, side: baseline, directory: directory(round: round, side: baseline))
            let second = PlannedRun(round: round, side: candidate, directory: directory(round: round, side: candidate))
            return round % 2 == 1 ? [first, second] : [second, first]
        }
    }

    /// `OUT/round-K-ROLE`.
    public func directory(round: Int, side: Side) -> String { "\(out)/round-\(round)-\(side.role)" }
}
