import Testing

@testable import LoadProfile

/// The whole run's planned population as one segment sees it: which arrivals are online when, which
/// account each uses, and how a random target is spread over the segments.
@Suite struct PlannedPopulationTests {
    /// 30 users over a 3 s ramp (one every 100 ms), accounts 1...30, 3 segments, counted online from
    /// 1 s after arrival until 10 s after it.
    static let population = PlannedPopulation(
        schedule: ArrivalSchedule(plan: .closed(sessions: 30, ramp: .seconds(3), duration: .seconds(60))),
        accounts: 1...30, segmentCount: 3, loginAllowance: .seconds(1), lifetime: .seconds(10))

    struct WindowRow: Sendable, CustomTestStringConvertible {
        let milliseconds: Int64
        let arrivals: Range<Int>
        let perSegment: [Int]
        var testDescription: String { "at \(milliseconds) ms" }
    }

    @Test(arguments: [
        WindowRow(milliseconds: 500, arrivals: 0..<0, perSegment: [0, 0, 0]),
        WindowRow(milliseconds: 1000, arrivals: 0..<1, perSegment: [1, 0, 0]),
        // Offsets up to 1.05 s: arrivals 0...10; segment 1 has 1, 4, 7, 10.
        WindowRow(milliseconds: 2050, arrivals: 0..<11, perSegment: [4, 4, 3]),
        WindowRow(milliseconds: 5000, arrivals: 0..<30, perSegment: [10, 10, 10]),
        // 12 s: arrivals up to 2 s (0...20) are through their 10 s.
        WindowRow(milliseconds: 12000, arrivals: 21..<30, perSegment: [3, 3, 3]),
        WindowRow(milliseconds: 13500, arrivals: 30..<30, perSegment: [0, 0, 0]),
    ])
    func onlineWindowFollowsArrivalsAndLifetime(_ row: WindowRow) {
        let time = Duration.milliseconds(row.milliseconds)
        #expect(Self.population.onlineArrivals(at: time) == row.arrivals)
        #expect((0..<3).map { Self.population.onlineCount(segment: $0, at: time) } == row.perSegment)
    }

    @Test func accountsAreEachSegmentsBlockInArrivalOrder() {
        // Blocks 1...10, 11...20, 21...30; arrival k of a segment uses the block's k-th account.
        #expect(Self.population.account(segment: 0, arrival: 0) == 1)
        #expect(Self.population.account(segment: 1, arrival: 3) == 14)
        #expect(Self.population.account(segment: 2, arrival: 9) == 30)
        // More arrivals than accounts: they wrap, as ArrivalDriver's claim does.
        #expect(Self.population.account(segment: 2, arrival: 12) == 23)
    }

    @Test func targetsSpreadOverEverySegmentInProportion() {
        var generator = SeededGenerator(seed: 11, stream: 0)
        var local = 0
        var remote: [Int: Int] = [:]
        let draws = 6000
        for _ in 0..<draws {
            switch Self.population.randomTarget(from: 0, at: .seconds(5), using: &generator) {
            case .local: local += 1
            case .remote(let account): remote[account, default: 0] += 1
            case nil: Issue.record("everyone is online at 5 s")
            }
        }
        // A third each (all 30 online); remote targets only in the other blocks, every account hit.
        #expect((1700...2300).contains(local))
        #expect(Set(remote.keys) == Set(11...30))
        let inSegment1 = (11...20).reduce(0) { $0 + remote[$1, default: 0] }
        #expect((1700...2300).contains(inSegment1))
        #expect(remote.values.allSatisfy { (120...280).contains($0) })
    }

    @Test func remoteTargetsAreOnlyThoseOnlineByPlan() {
        var generator = SeededGenerator(seed: 3, stream: 0)
        var seen: Set<Int> = []
        for _ in 0..<2000 {
            if case .remote(let account) = Self.population.randomTarget(from: 0, at: .milliseconds(2050), using: &generator) {
                seen.insert(account)
            }
        }
        // Segment 1's arrivals 0...3 (accounts 11...14) and segment 2's 0...2 (21...23).
        #expect(seen == Set(11...14).union(21...23))
    }

    @Test func nobodyOnlineGivesNoTarget() {
        var generator = SeededGenerator(seed: 1, stream: 0)
        #expect(Self.population.randomTarget(from: 1, at: .milliseconds(999), using: &generator) == nil)
    }

    @Test func reusedAccountsCountOncePerAccount() {
        // 30 arrivals over 6 accounts (2 per segment), staying online: each segment counts at most its
        // 2 accounts, and picks only them.
        let population = PlannedPopulation(
            schedule: ArrivalSchedule(plan: .closed(sessions: 30, ramp: .seconds(3), duration: .seconds(60))),
            accounts: 1...6, segmentCount: 3, loginAllowance: .zero, lifetime: nil)
        #expect(population.onlineCount(segment: 1, at: .seconds(10)) == 2)
        var generator = SeededGenerator(seed: 5, stream: 0)
        var seen: Set<Int> = []
        for _ in 0..<500 {
            if case .remote(let account) = population.randomTarget(from: 0, at: .seconds(10), using: &generator) {
                seen.insert(account)
            }
        }
        #expect(seen == [3, 4, 5, 6])
    }

    @Test func lifetimeComesFromTheProfiles() throws {
        let ending = try ProfileLoader.load(yaml: "steps: [login, {think: 10s}, logout]", file: "p.yaml")
        let staying = try ProfileLoader.load(yaml: "steps: [login, stay_online]", file: "p.yaml")
        let plan = LoadPlan.closed(sessions: 10, ramp: .seconds(1), duration: .seconds(30))
        let ends = PlannedPopulation(plan: plan, definition: ending, accounts: 1...10, segmentCount: 2, loginAllowance: .seconds(2))
        let stays = PlannedPopulation(plan: plan, definition: staying, accounts: 1...10, segmentCount: 2, loginAllowance: .seconds(2))
        #expect(ends.lifetime == .seconds(12))
        #expect(stays.lifetime == nil)
    }
}
