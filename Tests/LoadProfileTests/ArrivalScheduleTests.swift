import Testing

@testable import LoadProfile

/// Arrival times as pure functions of n: tables of (model, n) → offset, including the edges.
@Suite struct ArrivalScheduleTests {
    static func ms(_ duration: Duration) -> Int64 { duration.nanoseconds / 1_000_000 }

    struct Row: Sendable, CustomTestStringConvertible {
        let model: LoadModel
        let duration: Duration
        let n: Int
        let offsetMilliseconds: Int64?
        var testDescription: String { "\(model) n=\(n)" }
    }

    static let rows: [Row] = [
        // Closed: 100 users over 10 s → one every 100 ms.
        Row(model: .closed(users: 100, ramp: .seconds(10)), duration: .seconds(60), n: 0, offsetMilliseconds: 0),
        Row(model: .closed(users: 100, ramp: .seconds(10)), duration: .seconds(60), n: 1, offsetMilliseconds: 100),
        Row(model: .closed(users: 100, ramp: .seconds(10)), duration: .seconds(60), n: 99, offsetMilliseconds: 9900),
        Row(model: .closed(users: 100, ramp: .seconds(10)), duration: .seconds(60), n: 100, offsetMilliseconds: nil),
        Row(model: .closed(users: 5, ramp: .zero), duration: .seconds(1), n: 4, offsetMilliseconds: 0),
        // Open constant: 20/s → every 50 ms; 20 × 2 s = 40 arrivals.
        Row(model: .openConstant(rate: 20), duration: .seconds(2), n: 0, offsetMilliseconds: 0),
        Row(model: .openConstant(rate: 20), duration: .seconds(2), n: 39, offsetMilliseconds: 1950),
        Row(model: .openConstant(rate: 20), duration: .seconds(2), n: 40, offsetMilliseconds: nil),
        Row(model: .openConstant(rate: 0.5), duration: .seconds(10), n: 4, offsetMilliseconds: 8000),
        // Open ramping 0 → 10/s over 10 s: C(t) = t²/2, arrival k at sqrt(2k); 50 in all.
        Row(model: .openRamping(from: 0, to: 10), duration: .seconds(10), n: 0, offsetMilliseconds: 0),
        Row(model: .openRamping(from: 0, to: 10), duration: .seconds(10), n: 2, offsetMilliseconds: 2000),
        Row(model: .openRamping(from: 0, to: 10), duration: .seconds(10), n: 8, offsetMilliseconds: 4000),
        Row(model: .openRamping(from: 0, to: 10), duration: .seconds(10), n: 49, offsetMilliseconds: 9899),
        Row(model: .openRamping(from: 0, to: 10), duration: .seconds(10), n: 50, offsetMilliseconds: nil),
        // from == to is the constant rate.
        Row(model: .openRamping(from: 4, to: 4), duration: .seconds(5), n: 3, offsetMilliseconds: 750),
        // Ramping down 10 → 0 over 10 s: C(t) = 10t − t²/2; arrival 32 at t = 10 − sqrt(36) = 4 s.
        Row(model: .openRamping(from: 10, to: 0), duration: .seconds(10), n: 32, offsetMilliseconds: 4000),
        // Ramping users 10 → 20 over 10 s: first 10 at once, then one per second.
        Row(model: .rampingUsers(from: 10, to: 20), duration: .seconds(10), n: 9, offsetMilliseconds: 0),
        Row(model: .rampingUsers(from: 10, to: 20), duration: .seconds(10), n: 10, offsetMilliseconds: 1000),
        Row(model: .rampingUsers(from: 10, to: 20), duration: .seconds(10), n: 19, offsetMilliseconds: 10000),
    ]

    @Test(arguments: rows)
    func offsetOfArrival(_ row: Row) {
        let schedule = ArrivalSchedule(plan: LoadPlan(phases: [LoadPhase(name: "p", model: row.model, duration: row.duration)]))
        #expect(schedule.arrival(row.n).map { Self.ms($0.offset) } == row.offsetMilliseconds)
    }

    @Test func phasesChainEndToEnd() {
        let plan = LoadPlan(phases: [
            LoadPhase(name: "a", model: .openConstant(rate: 10), duration: .seconds(2)),  // 20 arrivals, 0..1.9 s
            LoadPhase(name: "b", model: .closed(users: 4, ramp: .seconds(4)), duration: .seconds(10)),  // at 2, 3, 4, 5 s
            LoadPhase(name: "c", model: .openConstant(rate: 1), duration: .seconds(3)),  // at 12, 13, 14 s
        ])
        let schedule = ArrivalSchedule(plan: plan)
        #expect(schedule.counts == [20, 4, 3])
        #expect(schedule.totalArrivals == 27)
        #expect(schedule.arrival(19).map { ($0.phase, Self.ms($0.offset)) } ?? (-1, -1) == (0, 1900))
        #expect(schedule.arrival(20).map { ($0.phase, Self.ms($0.offset)) } ?? (-1, -1) == (1, 2000))
        #expect(schedule.arrival(23).map { ($0.phase, Self.ms($0.offset)) } ?? (-1, -1) == (1, 5000))
        #expect(schedule.arrival(24).map { ($0.phase, Self.ms($0.offset)) } ?? (-1, -1) == (2, 12000))
        #expect(schedule.arrival(27) == nil)
        #expect(schedule.phaseEnd(1) == .seconds(12))
        #expect(schedule.startedArrivals(by: .seconds(3)) == 22)
        // Offsets never go backwards.
        let offsets = (0..<27).map { schedule.arrival($0)!.offset }
        #expect(offsets == offsets.sorted())
    }

    @Test func durationCapCutsArrivals() {
        var plan = LoadPlan.open(rate: 10, duration: .seconds(10))
        plan.durationCap = .seconds(3)
        let schedule = ArrivalSchedule(plan: plan)
        #expect(schedule.arrival(29) != nil)
        #expect(schedule.arrival(30) == nil)
        #expect(plan.stopAfter == .seconds(3))
    }

    @Test func closedWithoutDurationRunsUntilIdle() {
        let plan = LoadPlan.closed(sessions: 10, ramp: .seconds(5), duration: nil)
        #expect(plan.stopAfter == nil)
        #expect(LoadPlan.closed(sessions: 10, ramp: .seconds(5), duration: .seconds(60)).stopAfter == .seconds(60))
    }

    @Test(arguments: [1, 2, 3, 7])
    func segmentsPartitionArrivalsExactly(count: Int) {
        let total = 1000
        var seen = Array(repeating: 0, count: total)
        for index in 0..<count {
            let segment = Segment(index: index, count: count)
            var k = 0
            while segment.globalIndex(k) < total {
                #expect(segment.contains(segment.globalIndex(k)))
                seen[segment.globalIndex(k)] += 1
                k += 1
            }
        }
        #expect(seen.allSatisfy { $0 == 1 }, "every arrival in exactly one segment")
    }

    struct RampRow: Sendable, CustomTestStringConvertible {
        let from: Double
        let to: Double
        let seconds: Int64
        var testDescription: String { "\(from)/s→\(to)/s over \(seconds)s" }
    }

    /// Arrival k of a linear ramp is where the integral of the rate reaches k (within the nanosecond
    /// rounding), inside the phase, in order; and there are ⌊C(D)⌋ of them.
    @Test(arguments: [
        RampRow(from: 0, to: 10, seconds: 10), RampRow(from: 10, to: 0, seconds: 10), RampRow(from: 3, to: 3, seconds: 7),
        RampRow(from: 0.5, to: 250, seconds: 60), RampRow(from: 100, to: 1, seconds: 30), RampRow(from: 0, to: 0.5, seconds: 20),
    ])
    func rampArrivalsInvertTheIntegralOfTheRate(_ row: RampRow) {
        let duration = Double(row.seconds)
        let phase = LoadPhase(name: "r", model: .openRamping(from: row.from, to: row.to), duration: .seconds(row.seconds))
        let schedule = ArrivalSchedule(plan: LoadPlan(phases: [phase]))
        func integral(_ t: Double) -> Double { row.from * t + (row.to - row.from) * t * t / (2 * duration) }
        #expect(schedule.totalArrivals == Int((integral(duration) + 1e-9).rounded(.down)))
        var previous = -1.0
        for k in 0..<schedule.totalArrivals {
            let t = schedule.arrival(k)!.offset.seconds
            #expect(t >= previous && t <= duration)
            #expect(abs(integral(t) - Double(k)) < 1e-3, "arrival \(k) at \(t) s")
            previous = t
        }
        #expect(schedule.arrival(schedule.totalArrivals) == nil)
    }

    @Test(arguments: [1, 2, 3, 4, 7, 50])
    func segmentsSharePhasesWithinOneArrival(count: Int) {
        let plan = LoadPlan(phases: [
            LoadPhase(name: "a", model: .openConstant(rate: 3.3), duration: .seconds(10)),
            LoadPhase(name: "b", model: .closed(users: 17, ramp: .seconds(4)), duration: .seconds(10)),
            LoadPhase(name: "c", model: .openRamping(from: 1, to: 9), duration: .seconds(10)),
            LoadPhase(name: "d", model: .rampingUsers(from: 2, to: 5), duration: .seconds(10)),
        ])
        let schedule = ArrivalSchedule(plan: plan)
        for phase in plan.phases.indices {
            let shares = (0..<count).map { schedule.arrivals(inPhase: phase, segment: Segment(index: $0, count: count)) }
            #expect(shares.reduce(0, +) == schedule.counts[phase])
            #expect(shares.max()! - shares.min()! <= 1)
            // The counts agree with the striping itself.
            let first = schedule.firstArrival(ofPhase: phase)
            for (index, share) in shares.enumerated() {
                let segment = Segment(index: index, count: count)
                #expect(share == (first..<(first + schedule.counts[phase])).filter(segment.contains).count)
            }
        }
    }

    @Test(arguments: [(1...10, 3), (1...2000, 7), (5...5, 1), (1...3, 5), (100...199, 100)])
    func segmentsSplitAccountsIntoDisjointBlocks(accounts: ClosedRange<Int>, count: Int) {
        let blocks = (0..<count).compactMap { Segment(index: $0, count: count).share(of: accounts) }
        #expect(blocks.flatMap { Array($0) } == Array(accounts), "disjoint, in order, covering every account")
        let sizes = blocks.map(\.count)
        #expect(sizes.max()! - sizes.min()! <= 1)
    }

    @Test(arguments: [(100, 3), (7, 7), (5, 8), (1, 2), (1000, 6)])
    func segmentsSplitASessionLimit(limit: Int, count: Int) {
        let shares = (0..<count).map { Segment(index: $0, count: count).share(ofCount: limit) }
        #expect(shares.reduce(0, +) == limit, "the shares add up to the limit")
        #expect(shares.max()! - shares.min()! <= 1)
        var plan = LoadPlan.open(rate: 10, duration: .seconds(60))
        plan.phases[0].maxSessions = limit
        let schedule = ArrivalSchedule(plan: plan)
        for index in 0..<count {
            let segment = Segment(index: index, count: count)
            #expect(!schedule.isAtCapacity(phase: 0, live: shares[index] - 1, segment: segment) || shares[index] == 0)
            #expect(schedule.isAtCapacity(phase: 0, live: shares[index], segment: segment))
        }
        #expect(!schedule.isAtCapacity(phase: 0, live: limit - 1))
        #expect(schedule.isAtCapacity(phase: 0, live: limit))
    }

    @Test func segmentParsing() {
        #expect(Segment(parsing: "2/4") == Segment(index: 2, count: 4))
        #expect(Segment(parsing: "4/4") == nil)
        #expect(Segment(parsing: "x/4") == nil)
        #expect(Segment(parsing: "0/0") == nil)
    }
}
