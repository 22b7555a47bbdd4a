import LoadProfile
import SessionCore
import Testing

@testable import LoadEngine

/// `to: random` in a `--segment` run: this generator's sessions from the live directory, the other
/// segments' from the plan, as slots relative to this generator's first account.
@Suite struct WholeRunTargetsTests {
    /// 30 users over 3 s, accounts 1...30, 3 segments; counted online 1 s after arrival, for 10 s.
    static let population = PlannedPopulation(
        schedule: ArrivalSchedule(plan: .closed(sessions: 30, ramp: .seconds(3), duration: .seconds(60))),
        accounts: 1...30, segmentCount: 3, loginAllowance: .seconds(1), lifetime: .seconds(10))

    @Test func segmentOnePicksItsOwnFromTheDirectoryAndOthersByPlan() {
        // Segment 1 holds accounts 11...20; of them, slots 2 and 5 (accounts 13, 16) are online.
        let directory = OnlineDirectory(capacity: 10)
        for slot in [2, 5] { directory.setOnline(slot, true) }
        let targets = WholeRunTargets(directory: directory, population: Self.population, segment: Segment(index: 1, count: 3), firstAccount: 11)
        var generator = SeededGenerator(seed: 9, stream: 0)
        var accounts: [Int: Int] = [:]
        for _ in 0..<3000 {
            guard let slot = targets.randomOnlineSlot(excluding: 5, at: SessionInstant(nanoseconds: 5_000_000_000), using: &generator) else {
                Issue.record("someone is online")
                continue
            }
            accounts[11 + slot, default: 0] += 1
        }
        // Local picks: only account 13 (16 is the sender); remote: every account of the other blocks.
        #expect(Set(accounts.keys) == Set(1...10).union([13]).union(21...30))
        #expect((800...1200).contains(accounts[13] ?? 0), "a third of the picks stay local: \(accounts[13] ?? 0)")
    }

    @Test func aRunOfOneSegmentIsTheDirectory() {
        let directory = OnlineDirectory(capacity: 30)
        directory.setOnline(7, true)
        let targets = WholeRunTargets(directory: directory, population: nil, segment: .whole, firstAccount: 1)
        var generator = SeededGenerator(seed: 2, stream: 0)
        for _ in 0..<50 {
            #expect(targets.randomOnlineSlot(excluding: 0, at: SessionInstant(nanoseconds: 5_000_000_000), using: &generator) == 7)
        }
        #expect(targets.randomOnlineSlot(excluding: 7, at: .zero, using: &generator) == nil)
    }
}
