import Foundation
import Testing

@testable import LoadResults

/// The capacity search as tables: a server of known behaviour (which loads pass, fail, collapse or
/// saturate the generator) → the loads the search asks, in order, and its answer.
@Suite struct CapacitySearchTableTests {
    /// Runs a search against `server` (load → outcome) until it is done; the asked loads and the answer.
    static func drive(
        _ settings: CapacitySearch.Settings, limit: Int = 100, server: (Double, Int) -> CapacitySearch.Outcome
    ) -> (asked: [Double], purposes: [CapacitySearch.Purpose], answer: CapacitySearch.Answer?, search: CapacitySearch) {
        var search = CapacitySearch(settings)
        var asked: [Double] = []
        var purposes: [CapacitySearch.Purpose] = []
        while case .step(let load, let purpose) = search.next, asked.count < limit {
            asked.append(load)
            purposes.append(purpose)
            search.record(server(load, asked.count))
        }
        if case .done(let answer) = search.next { return (asked, purposes, answer, search) }
        return (asked, purposes, nil, search)
    }

    /// A server that passes below `knee` (exclusive) and fails at or above it.
    static func knee(_ knee: Double) -> (Double, Int) -> CapacitySearch.Outcome { { load, _ in load < knee ? .pass : .fail } }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var settings: CapacitySearch.Settings
        var knee: Double
        var asked: [Double]
        var answer: CapacitySearch.Answer
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "climb 5,10,20,40 (fail at 40), bisect to 10 %, confirm 35",
            settings: .init(start: 5, max: 1000, resolution: 0.10), knee: 36,
            asked: [5, 10, 20, 40, 30, 35, 37.5, 35],
            answer: .found(capacity: 35, firstFail: 37.5, resolved: true)),
        Row(
            name: "a knee right after the start: 10 passes, 20 fails, bisect 15, 12.5, 11.25, 10.625",
            settings: .init(start: 10, max: 1000, resolution: 0.10), knee: 11,
            asked: [10, 20, 15, 12.5, 11.25, 10.625, 10.625],
            answer: .found(capacity: 10.625, firstFail: 11.25, resolved: true)),
        Row(
            name: "the first step fails",
            settings: .init(start: 50, max: 1000), knee: 20,
            asked: [50],
            answer: .firstStepFailed),
        Row(
            name: "every step up to --max passes: at least max, capped climb",
            settings: .init(start: 10, max: 70), knee: 1000,
            asked: [10, 20, 40, 70],
            answer: .reachedMax(70)),
        Row(
            name: "closed model: whole sessions, stop at one session apart",
            settings: .init(start: 4, max: 100, resolution: 0.05, integral: true), knee: 11,
            asked: [4, 8, 16, 12, 10, 11, 10],
            answer: .found(capacity: 10, firstFail: 11, resolved: true)),
    ]

    @Test(arguments: rows)
    func aServerWithAKneeIsSearchedInTheseSteps(row: Row) {
        let result = Self.drive(row.settings, server: Self.knee(row.knee))
        #expect(result.asked == row.asked)
        #expect(result.answer == row.answer)
        // Invariants: every asked load within start...max; nothing asked above a load after it failed.
        #expect(result.asked.allSatisfy { $0 >= row.settings.start && $0 <= row.settings.max })
        var lowestFail = Double.infinity
        for load in result.asked {
            #expect(load < lowestFail)
            if load >= row.knee { lowestFail = min(lowestFail, load) }
        }
    }

    @Test func theSearchIsWithinItsResolutionOfTheKnee() {
        for knee in [7.0, 13, 26, 52, 99, 310] {
            let settings = CapacitySearch.Settings(start: 5, max: 1000, resolution: 0.05)
            let result = Self.drive(settings, server: Self.knee(knee))
            guard case .found(let capacity, let firstFail, _) = result.answer else {
                Issue.record("no capacity for knee \(knee): \(String(describing: result.answer))")
                continue
            }
            #expect(capacity < knee)
            #expect(capacity >= knee * 0.95 - 1e-9, "knee \(knee): \(capacity)")
            #expect((firstFail ?? .infinity) >= knee)
            #expect(result.purposes.last == .confirm)
        }
    }

    @Test func aKneeThatFailsItsRepeatStepsDownToTheNextPass() {
        // Passes below 30, except that 25 fails when it is repeated: 5, 10, 20 pass, 40 and 30 fail,
        // 25 passes (within 20 % of 30: confirm), its repeat fails → step down to 20, confirmed.
        var seen25 = 0
        let result = Self.drive(.init(start: 5, max: 1000, resolution: 0.2)) { load, _ in
            if load == 25 {
                seen25 += 1
                return seen25 == 1 ? .pass : .fail
            }
            return load < 30 ? .pass : .fail
        }
        #expect(result.asked == [5, 10, 20, 40, 30, 25, 25, 20])
        #expect(result.purposes.suffix(2) == [.confirm, .confirm])
        #expect(result.answer == .found(capacity: 20, firstFail: 25, resolved: true))
        #expect(result.search.steppedDown == [25])
    }

    @Test func aRepeatThatFailsWithNoLowerPassMeansTheFirstStepFailed() {
        var seen = 0
        let result = Self.drive(.init(start: 10, max: 1000, resolution: 0.5)) { load, _ in
            seen += 1
            return load == 10 && seen == 1 ? .pass : .fail
        }
        #expect(result.asked == [10, 20, 15, 10])
        #expect(result.answer == .firstStepFailed)
    }

    @Test func aGeneratorLimitedStepEndsTheSearchWithoutAnAnswer() {
        let result = Self.drive(.init(start: 5, max: 1000)) { load, _ in load >= 40 ? .generatorLimited : .pass }
        #expect(result.asked == [5, 10, 20, 40])
        #expect(result.answer == .generatorLimited(40))
    }

    @Test func aCollapseIsNeverClimbedPastAndTwoCollapsesStopBisecting() {
        // Collapses at 20 and above: 6, 12 pass, 24 collapses (no climb past it), 18 passes, 21
        // collapses: the second collapse stops bisecting before the 2 % resolution; 18 is confirmed.
        let result = Self.drive(.init(start: 6, max: 1000, resolution: 0.02)) { load, _ in load >= 20 ? .collapse : .pass }
        #expect(result.asked == [6, 12, 24, 18, 21, 18])
        #expect(result.purposes == [.climb, .climb, .climb, .bisect, .bisect, .confirm])
        #expect(result.answer == .found(capacity: 18, firstFail: 21, resolved: false))
        #expect(result.search.collapses == 2)
    }

    @Test func overloadsAreFailsThatDoNotStopBisecting() {
        // Latency far past the rule from 20 up: the search bisects to its resolution all the same.
        let result = Self.drive(.init(start: 6, max: 1000, resolution: 0.05)) { load, _ in load >= 20 ? .overload : .pass }
        #expect(result.asked == [6, 12, 24, 18, 21, 19.5, 20.25, 19.5])
        #expect(result.answer == .found(capacity: 19.5, firstFail: 20.25, resolved: true))
        #expect(result.search.collapses == 0)
    }
}
