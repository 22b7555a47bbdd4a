import LoadProfile
import Testing

@testable import LoadEngine

/// The control state as a pure function of time: asked values along ramps, pauses, and the time at
/// which the effective rate's integral reaches an area (how the open model's arrivals are placed).
@Suite struct ControlStateTests {
    /// A state built by a list of changes, then a query.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        /// Changes in order: (time, load value or nil, over, pause/resume: "pause"/"resume"/"").
        var changes: [(at: Double, value: Double?, over: Double, pause: String)]
        var at: Double
        var asked: Double
        var effective: Double
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "takeover holds the plan's value", changes: [], at: 50, asked: 10, effective: 10),
        Row(name: "at once", changes: [(5, 40, 0, "")], at: 5, asked: 40, effective: 40),
        Row(name: "before the change", changes: [(5, 40, 0, "")], at: 4.9, asked: 10, effective: 10),
        Row(name: "half way up a ramp", changes: [(5, 40, 10, "")], at: 10, asked: 25, effective: 25),
        Row(name: "after the ramp", changes: [(5, 40, 10, "")], at: 20, asked: 40, effective: 40),
        Row(name: "ramp down", changes: [(5, 0, 10, "")], at: 7.5, asked: 7.5, effective: 7.5),
        Row(name: "a change mid-ramp starts from where the ramp was", changes: [(5, 40, 10, ""), (10, 25, 0, "")], at: 12, asked: 25, effective: 25),
        Row(name: "second ramp from mid-ramp value", changes: [(5, 40, 10, ""), (10, 5, 10, "")], at: 15, asked: 15, effective: 15),
        Row(name: "paused", changes: [(5, nil, 0, "pause")], at: 6, asked: 10, effective: 0),
        Row(name: "resumed", changes: [(5, nil, 0, "pause"), (8, nil, 0, "resume")], at: 8, asked: 10, effective: 10),
        Row(
            name: "a ramp goes on while paused", changes: [(5, 40, 10, ""), (6, nil, 0, "pause"), (10, nil, 0, "resume")], at: 10, asked: 25,
            effective: 25),
        Row(name: "a late change is clamped to the last one", changes: [(10, 20, 0, ""), (8, 30, 0, "")], at: 10, asked: 30, effective: 30),
    ]

    static func state(_ changes: [(at: Double, value: Double?, over: Double, pause: String)]) -> ControlState {
        var state = ControlState(model: .open, takeover: 2, value: 10)
        for change in changes {
            if let value = change.value { state.setLoad(value, over: change.over, at: change.at) }
            if change.pause == "pause" { _ = state.pause(at: change.at) }
            if change.pause == "resume" { _ = state.resume(at: change.at) }
        }
        return state
    }

    @Test(arguments: rows)
    func askedAndEffective(_ row: Row) {
        let state = Self.state(row.changes)
        #expect(abs(state.asked(at: row.at) - row.asked) < 1e-9)
        #expect(abs(state.effective(at: row.at) - row.effective) < 1e-9)
    }

    /// `time(after:area:)`: the integral of the effective rate from `start` to the answer is `area`.
    struct AreaRow: CustomTestStringConvertible, Sendable {
        var name: String
        var changes: [(at: Double, value: Double?, over: Double, pause: String)]
        var start: Double
        var area: Double
        var time: Double?
        var testDescription: String { name }
    }

    static let areaRows: [AreaRow] = [
        AreaRow(name: "constant 10/s: one arrival every 0.1 s", changes: [], start: 2, area: 1, time: 2.1),
        AreaRow(name: "constant 10/s, 25 arrivals", changes: [], start: 2, area: 25, time: 4.5),
        AreaRow(name: "40/s from 5 s", changes: [(5, 40, 0, "")], start: 4, area: 10 + 40, time: 6),
        // 10 → 30 over 10 s from 0 (takeover at 2, change at 2): area by 2+x is 10x + x²; 10x + x² = 24 → x = 2.
        AreaRow(name: "along a ramp up", changes: [(2, 30, 10, "")], start: 2, area: 24, time: 4),
        // 10 → 0 over 10 s: area by x is 10x − x²/2; 10x − x²/2 = 42 → x = 6 (the other root is 14).
        AreaRow(name: "along a ramp down", changes: [(2, 0, 10, "")], start: 2, area: 42, time: 8),
        AreaRow(name: "ramp down to 0 never gives more than its area", changes: [(2, 0, 10, "")], start: 2, area: 51, time: nil),
        AreaRow(name: "a pause stops the integral", changes: [(3, nil, 0, "pause"), (5, nil, 0, "resume")], start: 2, area: 15, time: 5.5),
        AreaRow(name: "paused until further notice", changes: [(3, nil, 0, "pause")], start: 2, area: 15, time: nil),
        AreaRow(name: "rate 0", changes: [(2, 0, 0, "")], start: 2, area: 1, time: nil),
        AreaRow(name: "area 0 is now", changes: [], start: 7, area: 0, time: 7),
        // From 4 s the rate is 14/s growing 2/s²: by 6 s, 14·2 + 2·2²/2 = 32.
        AreaRow(name: "from mid-way", changes: [(2, 30, 10, "")], start: 4, area: 32, time: 6),
    ]

    @Test(arguments: areaRows)
    func timeForArea(_ row: AreaRow) {
        let state = Self.state(row.changes)
        let time = state.time(after: row.start, area: row.area)
        if let expected = row.time {
            #expect(time != nil && abs(time! - expected) < 1e-6, "got \(String(describing: time))")
        } else {
            #expect(time == nil)
        }
    }

    @Test func pauseAndResumeOnlyOnce() {
        var state = ControlState(model: .closed, takeover: 0, value: 100)
        let first = state.pause(at: 1)
        let second = state.pause(at: 2)
        let resumed = state.resume(at: 3)
        let again = state.resume(at: 4)
        #expect(first && !second && resumed && !again)
        #expect(state.isPaused(at: 2) && !state.isPaused(at: 3) && !state.isPaused(at: 0.5))
    }

    @Test func rampingIsSaid() {
        var state = ControlState(model: .open, takeover: 0, value: 10)
        #expect(!state.isRamping(at: 1))
        state.setLoad(40, over: 10, at: 1)
        #expect(state.isRamping(at: 5))
        #expect(!state.isRamping(at: 11))
    }

    /// The plan's load that control takes over: every load model, inside and past the phases.
    struct PlanRow: CustomTestStringConvertible, Sendable {
        var name: String
        var plan: LoadPlan
        var at: Double
        var model: ControlState.Model
        var value: Double
        var phase: Int
        var testDescription: String { name }
    }

    static let planRows: [PlanRow] = [
        PlanRow(name: "open constant", plan: .open(rate: 10, duration: .seconds(60)), at: 12, model: .open, value: 10, phase: 0),
        PlanRow(
            name: "open ramp half way",
            plan: LoadPlan(phases: [LoadPhase(name: "r", model: .openRamping(from: 10, to: 30), duration: .seconds(20))]), at: 10,
            model: .open, value: 20, phase: 0),
        PlanRow(
            name: "closed during its ramp", plan: .closed(sessions: 100, ramp: .seconds(10), duration: .seconds(60)), at: 5, model: .closed,
            value: 50, phase: 0),
        PlanRow(
            name: "closed after its ramp", plan: .closed(sessions: 100, ramp: .seconds(10), duration: .seconds(60)), at: 30, model: .closed,
            value: 100, phase: 0),
        PlanRow(
            name: "second phase",
            plan: LoadPlan(phases: [
                LoadPhase(name: "a", model: .openConstant(rate: 5), duration: .seconds(10)),
                LoadPhase(name: "b", model: .rampingUsers(from: 0, to: 40), duration: .seconds(20)),
            ]), at: 20, model: .closed, value: 20, phase: 1),
        PlanRow(name: "past the end: the last phase's value", plan: .open(rate: 7, duration: .seconds(10)), at: 99, model: .open, value: 7, phase: 0),
    ]

    @Test(arguments: planRows)
    func planLoad(_ row: PlanRow) {
        let load = ControlState.planLoad(row.plan, at: row.at)
        #expect(load?.model == row.model)
        #expect(load.map { abs($0.value - row.value) < 1e-9 } == true, "got \(String(describing: load?.value))")
        #expect(load?.phase == row.phase)
    }
}
