import Foundation
import Testing

@testable import LoadResults

/// The ladder of several generators (`capacity --segment`): `bisects: false` only climbs ×growth,
/// and the first failing step ends it with the last pass as the capacity, unresolved below the ratio.
@Suite struct CapacityLadderTests {
    static func ladder(start: Double, max: Double, growth: Double, integral: Bool = false) -> CapacitySearch.Settings {
        .init(start: start, max: max, integral: integral, growth: growth, bisects: false)
    }

    @Test(arguments: [
        // (knee: loads below it pass, asked loads, capacity)
        (16.0, [8.0, 12, 18], 12.0),
        (9.0, [8.0, 12], 8.0),
        (100.0, [8.0, 12, 18, 27, 40], 40.0),
    ])
    func aLadderClimbsUntilTheFirstFail(knee: Double, asked: [Double], capacity: Double) {
        let run = CapacitySearchTableTests.drive(Self.ladder(start: 8, max: 40, growth: 1.5), server: CapacitySearchTableTests.knee(knee))
        #expect(run.asked == asked)
        #expect(run.purposes.allSatisfy { $0 == .climb }, "no bisect, no repeat")
        if knee > 40 {
            #expect(run.answer == .reachedMax(40))
        } else {
            #expect(run.answer == .found(capacity: capacity, firstFail: asked.last, resolved: false))
        }
    }

    @Test func theFirstStepFailingIsNoCapacity() {
        let run = CapacitySearchTableTests.drive(Self.ladder(start: 8, max: 40, growth: 1.5), server: { _, _ in .fail })
        #expect(run.asked == [8] && run.answer == .firstStepFailed)
    }

    @Test func aCollapseOrAnOverloadEndsItLikeAFail() {
        for outcome in [CapacitySearch.Outcome.collapse, .overload] {
            let run = CapacitySearchTableTests.drive(Self.ladder(start: 10, max: 100, growth: 2)) { load, _ in load < 40 ? .pass : outcome }
            #expect(run.asked == [10, 20, 40])
            #expect(run.answer == .found(capacity: 20, firstFail: 40, resolved: false))
        }
    }

    @Test func theLaddersLoadsAreWhatEveryGeneratorAsks() {
        #expect(Self.ladder(start: 8, max: 40, growth: 1.5).ladder == [8, 12, 18, 27, 40])
        // Whole sessions: at least one more per step, even when ×growth rounds back.
        #expect(Self.ladder(start: 1, max: 5, growth: 1.25, integral: true).ladder == [1, 2, 3, 4, 5])
    }

    @Test func theResultSaysItIsALadderResolvedToItsRatio() {
        let run = CapacitySearchTableTests.drive(Self.ladder(start: 8, max: 40, growth: 1.5), server: CapacitySearchTableTests.knee(16))
        let result = CapacityResult(
            search: run.search, steps: [], rules: [], dimension: .arrivalRate, warmupSeconds: 2, stepSeconds: 6)
        #expect(result.kind == "found" && result.capacity == 12 && result.growth == 1.5)
        #expect(result.notes.contains { $0.contains("a ladder") && $0.contains("×1.5") }, "\(result.notes)")
        #expect(!result.resolved)
    }
}
