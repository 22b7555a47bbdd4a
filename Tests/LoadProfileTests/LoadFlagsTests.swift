import Testing

@testable import LoadProfile

/// `--sessions/--ramp/--rate/--duration/--seed` over a profile's own `load:`.
@Suite struct LoadFlagsTests {
    static let profilePlan = LoadPlan(phases: [LoadPhase(name: "p", model: .openConstant(rate: 5), duration: .seconds(60))], seed: 3)

    @Test func sessionsMakeAClosedPlan() throws {
        let plan = try LoadFlags(sessions: 2000, ramp: "20s", duration: "90s").plan(over: Self.profilePlan)
        #expect(plan.phases == [LoadPhase(name: "closed", model: .closed(users: 2000, ramp: .seconds(20)), duration: .seconds(90))])
        #expect(plan.durationCap == .seconds(90) && plan.seed == 1)
    }

    @Test func sessionsWithoutDurationRunUntilEveryUserFinished() throws {
        let plan = try LoadFlags(sessions: 10).plan(over: nil)
        #expect(plan.stopAfter == nil && plan.phases[0].endsWhenIdle)
    }

    @Test func rateMakesAnOpenPlan() throws {
        let plan = try LoadFlags(rate: 50, duration: "2m", seed: 9).plan(over: nil)
        #expect(plan.phases == [LoadPhase(name: "open", model: .openConstant(rate: 50), duration: .seconds(120))])
        #expect(plan.seed == 9)
    }

    @Test func durationCapsTheProfilesOwnPlan() throws {
        #expect(try LoadFlags().plan(over: Self.profilePlan) == Self.profilePlan)
        let capped = try LoadFlags(duration: "30s").plan(over: Self.profilePlan)
        #expect(capped.phases == Self.profilePlan.phases && capped.durationCap == .seconds(30) && capped.stopAfter == .seconds(30))
    }

    @Test(arguments: [
        (LoadFlags(sessions: 5, rate: 2, duration: "1m"), ["--sessions (closed model) and --rate (open model) exclude each other"]),
        (LoadFlags(sessions: 0), ["--sessions must be between 1 and 100000000, got 0"]),
        (
            LoadFlags(rate: -1, duration: "soon"),
            [
                "--duration: 'soon' is not a duration (e.g. 500ms, 90s, 2m, 1h30m)",
                "--rate must be greater than 0 and at most 1000000 per second, got -1.0",
            ]
        ),
        (LoadFlags(rate: 3), ["--rate needs --duration"]),
        (LoadFlags(ramp: "10s", rate: 3, duration: "1m"), ["--ramp goes with --sessions (an open model ramps in the profile's `load:`)"]),
        (LoadFlags(sessions: 5, ramp: "2m", duration: "1m"), ["--ramp (2m) is longer than --duration (1m)"]),
        (LoadFlags(sessions: 5, duration: "0s"), ["--duration must be longer than zero"]),
        (LoadFlags(), ["no load model: give --sessions N or --rate R --duration D, or a `load:` section in the profile"]),
    ])
    func problemsAreReportedTogether(flags: LoadFlags, expected: [String]) {
        do {
            _ = try flags.plan(over: nil)
            Issue.record("accepted \(flags)")
        } catch {
            #expect(error.messages == expected)
        }
    }

    @Test(arguments: ["1e20", "99999999999999h", "3000000000d", "inf", "nan"])
    func absurdDurationsAreRejectedNotTrapped(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func absurdRatesCannotOverflowTheArrivalCount() {
        let schedule = ArrivalSchedule(plan: .open(rate: 1e300, duration: .seconds(60)))
        #expect(schedule.totalArrivals == 1_000_000_000_000_000)
        #expect(ArrivalSchedule(plan: .open(rate: .infinity, duration: .seconds(1))).totalArrivals == 0)
    }
}
