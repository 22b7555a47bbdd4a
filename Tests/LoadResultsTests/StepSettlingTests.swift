import Foundation
import Testing

@testable import LoadResults

/// A capacity step starts on a settled server: tables of observations (one a second) → when the
/// step starts and the start state it records.
@Suite struct StepSettlingTests {
    typealias Observation = StepSettling.Observation

    /// Feeds observations one a second until the settling says start; the second it started at and its state.
    static func drive(
        _ settling: StepSettling, _ observations: [(sessions: Int, cpu: Double?, connections: Double?)]
    ) -> (
        at: Double, state: StepStartState
    )? {
        var settling = settling
        for (index, observation) in observations.enumerated() {
            let decision = settling.observe(
                Observation(
                    at: Double(index + 1), generatorSessions: observation.sessions, serverCPUPercent: observation.cpu,
                    serverConnections: observation.connections))
            if case .start(let state) = decision { return (Double(index + 1), state) }
        }
        return nil
    }

    @Test func withoutAMonitorTheGeneratorsSessionsAndTheMinimumWaitDecide() throws {
        let started = try #require(
            Self.drive(StepSettling(monitored: false), [(300, nil, nil), (12, nil, nil), (0, nil, nil), (0, nil, nil)]))
        #expect(started.at == 3)
        #expect(started.state.settled)
        #expect(started.state.reason == "settled: no sessions left (server not monitored)")
        // Gone at once: still waits the minimum 2 s.
        #expect(Self.drive(StepSettling(monitored: false), [(0, nil, nil), (0, nil, nil)])?.at == 2)
    }

    @Test func aBusyServerHoldsTheStepUntilItsCPUIsBackNearIdleTwiceInARow() throws {
        // Idle 3 % → ceiling max(4.5, 8) = 8 %. The backlog drains over 6 s; one dip does not count.
        let settling = StepSettling(monitored: true, idleCPUPercent: 3)
        #expect(settling.cpuCeiling == 8)
        let started = try #require(
            Self.drive(
                settling,
                [(0, 99, nil), (0, 97, nil), (0, 6, nil), (0, 60, nil), (0, 7, nil), (0, 4, nil), (0, 3, nil)]))
        #expect(started.at == 6)
        #expect(
            started.state
                == StepStartState(
                    settled: true, waitedSeconds: 6, generatorSessions: 0, serverCPUPercent: 4, idleCPUPercent: 3, serverConnections: nil,
                    reason: "settled: no sessions left, server CPU at its idle level"))
    }

    @Test func aGapBreaksTheQuietRow() throws {
        let started = try #require(
            Self.drive(StepSettling(monitored: true, idleCPUPercent: 2), [(0, 3, nil), (0, nil, nil), (0, 3, nil), (0, 3, nil)]))
        #expect(started.at == 4)
    }

    @Test func connectionsAboveTheIdleLevelHoldTheStep() throws {
        // Idle 120 descriptors → ceiling 120 + max(10, 6) = 130.
        let settling = StepSettling(monitored: true, idleCPUPercent: 2, idleConnections: 120)
        #expect(settling.connectionCeiling == 130)
        let started = try #require(
            Self.drive(settling, [(0, 2, 2100), (0, 2, 900), (0, 2, 131), (0, 2, 125), (0, 2, 122)]))
        #expect(started.at == 4)
        #expect(started.state.serverConnections == 125)
    }

    @Test func theTimeoutStartsTheStepAnywayAndSaysWhatWasNotSettled() throws {
        var rules = StepSettling.Rules()
        rules.timeoutSeconds = 3
        let started = try #require(
            Self.drive(StepSettling(monitored: true, idleCPUPercent: 3, rules: rules), [(0, 95, nil), (5, 92, nil), (2, 90, nil)]))
        #expect(started.at == 3)
        #expect(!started.state.settled)
        #expect(
            started.state.reason
                == "not settled after 3 s: 2 session(s) of the previous step still open; server CPU 90 % of a core, above its idle ceiling 8 %")
    }

    @Test func theIdleLevelIsTheMedianOfTheBaseline() {
        #expect(StepSettling.idleLevel([3, 2, 50, 4, 2]) == 3)
        #expect(StepSettling.idleLevel([2, 4]) == 3)
        #expect(StepSettling.idleLevel([]) == nil)
        // Without a baseline, a monitored server must fall under the margin itself.
        #expect(StepSettling(monitored: true).cpuCeiling == 5)
    }

    @Test func theStartStateIsAPlainJSONValue() throws {
        let state = StepStartState(
            settled: false, waitedSeconds: 60, generatorSessions: 0, serverCPUPercent: 40, idleCPUPercent: 2, serverConnections: nil,
            reason: "x")
        let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(json.contains("\"waited_seconds\":60"))
        #expect(try JSONDecoder().decode(StepStartState.self, from: Data(json.utf8)) == state)
    }
}
