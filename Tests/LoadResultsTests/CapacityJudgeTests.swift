import Foundation
import Testing

@testable import LoadResults

/// Capacity steps judged from synthetic intervals (1 s each, warm-up 2 s, load end 8 s): pass, fail,
/// collapse, generator-limited, and the headline, table and chart of a whole search.
@Suite struct CapacityJudgeTests {
    static let loginRule = Threshold(
        quantity: VerdictTests.loginP99, comparison: .less, bound: 300, unit: .milliseconds, text: "login.p99 < 300ms")
    static let errorRule = Threshold(quantity: .errorsRate, comparison: .less, bound: 0.01, unit: .fraction, text: "errors.rate < 1%")

    /// Eight 1 s intervals; `shape(index)` changes one.
    static func intervals(_ shape: (Int, inout IntervalSnapshot) -> Void = { _, _ in }) -> [IntervalSnapshot] {
        (0..<8).map { index in
            var snapshot = VerdictTests.interval(index, logins: 10, loginMs: 100, online: 10, seconds: 1)
            shape(index, &snapshot)
            return snapshot
        }
    }

    static func judge(_ intervals: [IntervalSnapshot], asked: Double = 10, rules: [Threshold] = [loginRule, errorRule]) -> CapacityStep {
        CapacityJudge.judge(
            intervals: intervals, rules: rules, dimension: .arrivalRate, asked: asked, warmup: 2, loadEnd: 8, index: 1, purpose: .climb,
            directory: "steps/01-10per")
    }

    @Test func aStepWithinItsRulesPassesWithItsAchievedRate() {
        let step = Self.judge(Self.intervals())
        #expect(step.outcome == .pass)
        #expect(step.achieved == 10)
        #expect(step.loginsPerSecond == 10)
        #expect(step.judgedSeconds == 6)
        #expect(step.rules.map(\.status) == [.pass, .pass])
        #expect(step.rules[0].value.map { abs($0 - 100) < 0.2 } == true)
    }

    @Test func theWarmUpIsNotJudged() {
        let step = Self.judge(
            Self.intervals { index, snapshot in if index < 2 { snapshot = VerdictTests.interval(index, loginMs: 5000, seconds: 1) } })
        #expect(step.outcome == .pass)
    }

    @Test func aRuleOverItsLimitFailsTheStepAndNamesTheRule() {
        let step = Self.judge(
            Self.intervals { index, snapshot in
                if index == 5 { snapshot = VerdictTests.interval(index, logins: 10, loginMs: 400, online: 10, seconds: 1) }
            })
        #expect(step.outcome == .fail)
        #expect(step.limitingRule([Self.loginRule, Self.errorRule])?.rule.text == "login.p99 < 300ms")
    }

    @Test func latencyFarPastItsLimitIsAnOverload() {
        let step = Self.judge(
            Self.intervals { index, snapshot in
                if index >= 4 { snapshot = VerdictTests.interval(index, logins: 10, loginMs: 2000, online: 10, seconds: 1) }
            })
        #expect(step.outcome == .overload)
        #expect(step.reason?.contains("more than 5× its limit") == true)
    }

    @Test func mostSessionsFailingIsACollapse() {
        let step = Self.judge(
            Self.intervals { index, snapshot in
                snapshot = VerdictTests.interval(index, logins: 2, errors: 8, errorKind: "connect-refused", online: 0, seconds: 1)
            })
        #expect(step.outcome == .collapse)
        #expect(step.errorRate == 0.8)
        #expect(step.reason?.contains("80") == true)
    }

    @Test func aStepCutShortIsJudgedUpToTheCutOnly() {
        // Cut at 4 s: the intervals after it (arrivals stopped, sessions logging out) are not judged.
        let step = CapacityJudge.judge(
            intervals: Self.intervals { index, snapshot in if index >= 4 { snapshot.counters[Counter.sessionsStarted.name] = 0 } },
            rules: [Self.loginRule], dimension: .arrivalRate, asked: 10, warmup: 2, loadEnd: 8, index: 1, purpose: .climb, cutAt: 4,
            directory: "steps/01-10per")
        #expect(step.cutShort)
        #expect(step.judgedSeconds == 2)
        #expect(step.achieved == 10)
    }

    @Test func aClosedStepJudgesItsRampsLoginsWhenTheHoldHasNone() {
        // 10 sessions log in during the 2 s warm-up (the ramp), then stay online: no login after it.
        let intervals = Self.intervals { index, snapshot in
            if index >= 2 { snapshot = VerdictTests.interval(index, logins: 0, online: 10, started: 0, completed: 0, seconds: 1) }
        }
        let step = CapacityJudge.judge(
            intervals: intervals, rules: [Self.loginRule], dimension: .sessions, asked: 10, warmup: 2, loadEnd: 8, index: 1, purpose: .climb,
            directory: "steps/01-10")
        #expect(step.outcome == .pass)
        #expect(step.achieved == 10)
        #expect(step.rules[0].note?.contains("whole step") == true)
        // An open step with no login after its warm-up fails: nothing showed the rule holds.
        let open = Self.judge(intervals)
        #expect(open.outcome == .fail)
    }

    @Test func aSaturatedGeneratorIsRefusedBeforeAnythingElse() {
        let step = Self.judge(
            Self.intervals { index, snapshot in
                if index >= 5 {
                    snapshot.health = GeneratorHealth(
                        cpuPercent: 195, cpuSeconds: 2, rssBytes: 1, openFileDescriptors: 5, loopLagP99Milliseconds: 80,
                        loopLagMaxMilliseconds: 120, cores: 2)
                    var histogram = LatencyHistogram()
                    histogram.record(microseconds: 4_000_000, count: 10)
                    snapshot.latency["login"] = histogram
                }
            })
        #expect(step.outcome == .generatorLimited)
        #expect(step.saturatedIntervals == 3)
        #expect(step.reason?.contains("saturated in 3 of 6") == true)
    }

    @Test func droppedArrivalsMeanTheGeneratorCouldNotOfferTheLoad() {
        let step = Self.judge(
            Self.intervals { index, snapshot in
                if index >= 2 { snapshot.counters[Counter.droppedArrivals.name] = 1 }
            })
        // 6 dropped of 60 asked (10 %): more than 2 %.
        #expect(step.outcome == .generatorLimited)
        #expect(step.droppedArrivals == 6)
    }

    @Test func oneIntervalShowsACollapseOnlyWithEnoughSessions() {
        let bad = VerdictTests.interval(3, logins: 1, errors: 9, errorKind: "connect-refused", online: 0, seconds: 1)
        #expect(CapacityJudge.collapse(in: bad, onlineBefore: 0, rules: [Self.loginRule])?.outcome == .collapse)
        #expect(CapacityJudge.collapse(in: bad, onlineBefore: 0, rules: [Self.loginRule])?.reason.contains("failed") == true)
        let few = VerdictTests.interval(3, logins: 1, errors: 2, errorKind: "connect-refused", online: 0, seconds: 1)
        #expect(CapacityJudge.collapse(in: few, onlineBefore: 0, rules: [Self.loginRule]) == nil)
        let slow = VerdictTests.interval(3, logins: 10, loginMs: 1600, seconds: 1)
        #expect(CapacityJudge.collapse(in: slow, onlineBefore: 0, rules: [Self.loginRule])?.outcome == .overload)
        let fine = VerdictTests.interval(3, logins: 10, loginMs: 1400, seconds: 1)
        #expect(CapacityJudge.collapse(in: fine, onlineBefore: 0, rules: [Self.loginRule]) == nil)
    }

    @Test func theResultNamesTheCapacityTheRuleThatBoundsItAndDrawsTheKnee() throws {
        var search = CapacitySearch(.init(start: 20, max: 1000, resolution: 0.10))
        var steps: [CapacityStep] = []
        for (load, ms) in [(20.0, 100.0), (40, 312), (30, 200), (35, 310), (32.5, 250), (32.5, 240)] {
            guard case .step(let asked, let purpose) = search.next else { break }
            #expect(asked == load)
            var step = Self.judge(
                Self.intervals { index, snapshot in
                    snapshot = VerdictTests.interval(index, logins: UInt64(load), loginMs: UInt64(ms), online: 10, seconds: 1)
                }, asked: asked, rules: [Self.loginRule])
            step.index = steps.count + 1
            step.purpose = purpose
            steps.append(step)
            search.record(step.outcome)
        }
        let result = CapacityResult(
            search: search, steps: steps, rules: [Self.loginRule], dimension: .arrivalRate, warmupSeconds: 2, stepSeconds: 6)
        #expect(result.kind == "found")
        #expect(result.capacity == 32.5)
        #expect(result.limitedBy == "login.p99 < 300ms")
        #expect(result.headline == "capacity: 32.5 logins/s — limited by login.p99 (310 ms > 300 ms at 35/s)")
        let table = result.table()
        #expect(table.split(separator: "\n").count == 7)
        #expect(table.contains("login.p99 < 300ms"))
        let html = result.html(title: "login")
        #expect(html.contains("knee at 32.5/s"))
        #expect(html.contains("class=\"band\""))
        #expect(html.contains("Latency rules against offered load"))
        let json = try JSONEncoder().encode(result)
        let decoded = try JSONDecoder().decode(CapacityResult.self, from: json)
        #expect(decoded == result)
    }

    @Test func aGeneratorLimitedSearchSaysHowToAddGenerators() {
        var search = CapacitySearch(.init(start: 20, max: 1000))
        search.record(.pass)
        search.record(.generatorLimited)
        var step = Self.judge(Self.intervals(), asked: 40)
        step.outcome = .generatorLimited
        step.reason = "the generator saturated in 4 of 6 judged intervals"
        let result = CapacityResult(search: search, steps: [step], rules: [Self.loginRule], dimension: .arrivalRate, warmupSeconds: 2, stepSeconds: 6)
        #expect(result.kind == "generator-limited")
        #expect(result.capacity == nil)
        #expect(result.headline.hasPrefix("no capacity: the generator, not the server, was the limit at 40/s"))
        #expect(result.notes.contains { $0.contains("--segment") })
    }
}
