/// Which sessions of a whole run the plan says are online at a time, per generator segment: what a
/// generator of a `--segment i/N` run knows about the sessions of the other N − 1 generators without
/// talking to them. Pure; every generator computes the same answer from the plan, the seed-free
/// schedule and the whole account range.
///
/// The model (an approximation, see docs/CLUSTERS.md): arrival *n* (run-wide index) belongs to segment
/// *n* mod N as its *k*-th arrival (k = n / N) and uses account `block.lowerBound + k % block.count` of
/// that segment's block of accounts (what `ArrivalDriver` claims when no account is busy). It is
/// counted online from its arrival offset + `loginAllowance` (time to log in and announce presence)
/// until its arrival offset + `lifetime` (the profile's expected active time; nil: until the load
/// stops). Reconnects, failed logins and busy accounts are not foreseen: a message to a session that
/// is not online by then is counted lost by the ledger, honestly.
public struct PlannedPopulation: Sendable {
    public let schedule: ArrivalSchedule
    /// The whole run's account range (before `--segment` took a block of it).
    public let accounts: ClosedRange<Int>
    /// N of `--segment i/N`.
    public let segmentCount: Int
    /// Time from an arrival until its session is counted as a target.
    public let loginAllowance: Duration
    /// Time from an arrival until its session is no longer counted (nil: it stays until the load stops).
    public let lifetime: Duration?
    /// Each segment's block of `accounts` (nil when it has none).
    private let blocks: [ClosedRange<Int>?]

    /// Where a random message target lives.
    public enum Target: Sendable, Equatable {
        /// One of this generator's own sessions: pick it from the live online directory.
        case local
        /// The account number (the N of `userN`) of another generator's session.
        case remote(account: Int)
    }

    public init(
        schedule: ArrivalSchedule, accounts: ClosedRange<Int>, segmentCount: Int,
        loginAllowance: Duration = .seconds(2), lifetime: Duration?
    ) {
        precondition(segmentCount > 0, "a run has at least one segment")
        self.schedule = schedule
        self.accounts = accounts
        self.segmentCount = segmentCount
        self.loginAllowance = loginAllowance
        self.lifetime = lifetime
        blocks = (0..<segmentCount).map { Segment(index: $0, count: segmentCount).share(of: accounts) }
    }

    /// The population of `definition`'s profiles under `plan`: the lifetime is the weighted mean of
    /// the profiles' expected active time (`PlanReport.SessionShape`), none when some profile stays
    /// online or repeats forever.
    public init(
        plan: LoadPlan, definition: RunDefinition, accounts: ClosedRange<Int>, segmentCount: Int,
        loginAllowance: Duration = .seconds(2)
    ) {
        let shape = PlanReport.SessionShape(definition: definition)
        let lifetime = shape.staysOnline ? nil : loginAllowance + .nanoseconds(Int64(shape.activeSeconds * 1e9))
        self.init(
            schedule: ArrivalSchedule(plan: plan), accounts: accounts, segmentCount: segmentCount,
            loginAllowance: loginAllowance, lifetime: lifetime)
    }

    /// Run-wide arrival indices planned online at `time` (since the run's start): arrived at least
    /// `loginAllowance` ago and, with a lifetime, arrived less than `lifetime` ago.
    public func onlineArrivals(at time: Duration) -> Range<Int> {
        let joined = time - loginAllowance
        guard joined >= .zero else { return 0..<0 }
        let end = schedule.startedArrivals(by: joined)
        guard let lifetime else { return 0..<end }
        let left = time - lifetime
        let start = left >= .zero ? min(schedule.startedArrivals(by: left), end) : 0
        return start..<end
    }

    /// How many sessions of segment `index` are planned online at `time` (at most its accounts).
    public func onlineCount(segment index: Int, at time: Duration) -> Int {
        guard let block = blocks[index] else { return 0 }
        let segment = Segment(index: index, count: segmentCount)
        let range = onlineArrivals(at: time)
        let count = segment.arrivals(before: range.upperBound) - segment.arrivals(before: range.lowerBound)
        return min(count, block.count)
    }

    /// The account the `k`-th arrival of segment `index` logs in as.
    public func account(segment index: Int, arrival k: Int) -> Int? {
        guard let block = blocks[index] else { return nil }
        return block.lowerBound + k % block.count
    }

    /// A random target for a session of segment `local` at `time`: a segment is chosen with chance
    /// proportional to its planned online sessions (every generator weighs the same way), then, for
    /// another segment, one of its planned-online arrivals uniformly (the newest arrival per
    /// account). `.local` leaves the choice to the live directory. nil when the plan has nobody online.
    public func randomTarget(from local: Int, at time: Duration, using generator: inout some RandomNumberGenerator) -> Target? {
        let range = onlineArrivals(at: time)
        var weights: [Int] = []
        weights.reserveCapacity(segmentCount)
        for index in 0..<segmentCount {
            weights.append(onlineCount(segment: index, at: time))
        }
        let total = weights.reduce(0, +)
        guard total > 0 else { return nil }
        var point = Int.random(in: 0..<total, using: &generator)
        var chosen = 0
        while point >= weights[chosen] {
            point -= weights[chosen]
            chosen += 1
        }
        if chosen == local { return .local }
        let segment = Segment(index: chosen, count: segmentCount)
        let first = segment.arrivals(before: range.lowerBound)
        let end = segment.arrivals(before: range.upperBound)
        // The newest arrivals of the window, at most one per account (older ones gave theirs back).
        let lower = max(first, end - weights[chosen])
        guard lower < end, let account = account(segment: chosen, arrival: Int.random(in: lower..<end, using: &generator)) else {
            return nil
        }
        return .remote(account: account)
    }
}
