import LoadResults
import Testing

@testable import LoadEngine

/// The run's stop sequence, fed plain observations: every transition, the deadlines, a second stop
/// request, a request while draining, and which reason wins.
@Suite struct RunStopSequenceTests {
    typealias Observation = RunStopSequence.Observation
    typealias Action = RunStopSequence.Action

    /// One scripted run: observations in order, each with the actions it must return, then the
    /// phase and reason at the end. Plan: load ends at 10 s, message grace 5 s, graceful stop 30 s.
    struct Script: CustomTestStringConvertible, Sendable {
        var name: String
        var loadEnd: Duration? = .seconds(10)
        var steps: [(Observation, [Action])]
        var phase: RunStopSequence.Phase
        var reason: StopReason
        var testDescription: String { name }
    }

    static func at(
        _ seconds: Double, requests: Int = 0, reason: StopReason = .interrupted, idle: Bool = false,
        inFlight: Int64 = 0, live: Int = 0
    ) -> Observation {
        Observation(
            now: .milliseconds(Int64(seconds * 1000)), stopRequests: requests, requestedReason: reason,
            everyLoopIdle: idle, messagesInFlight: inFlight, liveSessions: live)
    }

    static let scripts: [Script] = [
        Script(
            name: "load continues before its end",
            steps: [(at(0.05, inFlight: 7, live: 10), []), (at(9.99, live: 10), [])],
            phase: .load, reason: .completed),
        Script(
            name: "every loop idle, no planned end: completed",
            loadEnd: nil,
            steps: [(at(3, live: 2), []), (at(4, idle: true), [.finish])],
            phase: .done, reason: .completed),
        Script(
            name: "planned end reached: draining for the message grace",
            steps: [(at(10, inFlight: 4, live: 10), [.stopArrivals])],
            phase: .draining(until: .seconds(15)), reason: .duration),
        Script(
            name: "draining ends when no message is in flight",
            steps: [
                (at(10, inFlight: 4, live: 10), [.stopArrivals]), (at(11, inFlight: 2, live: 10), []),
                (at(12, inFlight: 0, live: 10), [.beginGracefulStop]),
            ],
            phase: .stopping(deadline: .seconds(42)), reason: .duration),
        Script(
            name: "draining ends at the grace deadline with messages still in flight",
            steps: [
                (at(10, inFlight: 4, live: 10), [.stopArrivals]), (at(14.99, inFlight: 4, live: 10), []),
                (at(15, inFlight: 4, live: 10), [.beginGracefulStop]),
            ],
            phase: .stopping(deadline: .seconds(45)), reason: .duration),
        Script(
            name: "a stop request while draining stops gracefully; the reason stays duration",
            steps: [
                (at(10, inFlight: 4, live: 10), [.stopArrivals]),
                (at(11, requests: 1, inFlight: 4, live: 10), [.beginGracefulStop]),
            ],
            phase: .stopping(deadline: .seconds(41)), reason: .duration),
        Script(
            name: "two stop requests while draining close at once",
            steps: [
                (at(10, inFlight: 4, live: 10), [.stopArrivals]),
                (at(11, requests: 2, inFlight: 4, live: 10), [.beginGracefulStop, .closeAll, .finish]),
            ],
            phase: .done, reason: .duration),
        Script(
            name: "stopping ends when the last session is gone",
            steps: [
                (at(10, inFlight: 0, live: 10), [.stopArrivals]), (at(10.05, live: 10), [.beginGracefulStop]),
                (at(11, live: 3), []), (at(12, live: 0), [.finish]),
            ],
            phase: .done, reason: .duration),
        Script(
            name: "graceful-stop deadline closes what is left",
            steps: [
                (at(10, inFlight: 0, live: 10), [.stopArrivals]), (at(10.05, live: 10), [.beginGracefulStop]),
                (at(40.04, live: 1), []), (at(40.05, live: 1), [.closeAll, .finish]),
            ],
            phase: .done, reason: .duration),
        Script(
            name: "a signal during the load stops arrivals and stops gracefully",
            steps: [(at(2, requests: 1, live: 10), [.stopArrivals, .beginGracefulStop])],
            phase: .stopping(deadline: .seconds(32)), reason: .interrupted),
        Script(
            name: "a second signal while stopping closes at once",
            steps: [
                (at(2, requests: 1, live: 10), [.stopArrivals, .beginGracefulStop]), (at(3, requests: 1, live: 10), []),
                (at(4, requests: 2, live: 10), [.closeAll, .finish]),
            ],
            phase: .done, reason: .interrupted),
        Script(
            name: "two signals before the first poll close at once",
            steps: [(at(2, requests: 2, live: 10), [.stopArrivals, .beginGracefulStop, .closeAll, .finish])],
            phase: .done, reason: .interrupted),
        Script(
            name: "the first request's reason wins: thresholds failed",
            steps: [
                (at(2, requests: 1, reason: .thresholdsFailed, live: 10), [.stopArrivals, .beginGracefulStop]),
                (at(3, live: 0), [.finish]),
            ],
            phase: .done, reason: .thresholdsFailed),
        Script(
            name: "a request beats the planned end in the same observation",
            steps: [(at(10, requests: 1, reason: .thresholdsFailed, inFlight: 3, live: 10), [.stopArrivals, .beginGracefulStop])],
            phase: .stopping(deadline: .seconds(40)), reason: .thresholdsFailed),
        Script(
            name: "a request beats idleness in the same observation",
            loadEnd: nil,
            steps: [(at(5, requests: 1, idle: true), [.stopArrivals, .beginGracefulStop]), (at(5.05), [.finish])],
            phase: .done, reason: .interrupted),
        Script(
            name: "the planned end beats idleness in the same observation",
            steps: [
                (at(10, idle: true, inFlight: 0), [.stopArrivals]), (at(10.05), [.beginGracefulStop]),
                (at(10.1), [.finish]),
            ],
            phase: .done, reason: .duration),
        Script(
            name: "after finishing nothing more happens",
            loadEnd: nil,
            steps: [(at(1, idle: true), [.finish]), (at(2, requests: 2, idle: true), []), (at(3), [])],
            phase: .done, reason: .completed),
    ]

    @Test(arguments: scripts)
    func script(_ script: Script) {
        var sequence = RunStopSequence(loadEnd: script.loadEnd, messageGrace: .seconds(5), gracefulStop: .seconds(30))
        for (index, (observation, expected)) in script.steps.enumerated() {
            let actions = sequence.observe(observation)
            #expect(actions == expected, "step \(index) at \(observation.now)")
        }
        #expect(sequence.phase == script.phase)
        #expect(sequence.reason == script.reason)
        #expect(sequence.isDone == (script.phase == .done))
    }

    /// Messages in flight are measured only while draining.
    @Test func messagesInFlightAreNeededOnlyWhileDraining() {
        var sequence = RunStopSequence(loadEnd: .seconds(1), messageGrace: .seconds(5), gracefulStop: .seconds(30))
        #expect(!sequence.needsMessagesInFlight)
        _ = sequence.observe(Self.at(1, inFlight: 1, live: 1))
        #expect(sequence.needsMessagesInFlight)
        _ = sequence.observe(Self.at(1.05, inFlight: 0, live: 1))
        #expect(!sequence.needsMessagesInFlight)
    }

    /// Whatever the observations, `.finish` comes once, last, and nothing follows it.
    @Test(arguments: [StopReason.interrupted, .thresholdsFailed])
    func finishComesExactlyOnce(reason: StopReason) {
        var sequence = RunStopSequence(loadEnd: .seconds(3), messageGrace: .seconds(1), gracefulStop: .seconds(2))
        var all: [Action] = []
        for tick in 0..<200 {
            let seconds = Double(tick) * 0.05
            all += sequence.observe(
                Self.at(
                    seconds, requests: tick >= 100 ? 1 : 0, reason: reason,
                    inFlight: 5, live: tick < 150 ? 4 : 0))
        }
        #expect(all.filter { $0 == .finish }.count == 1)
        #expect(all.last == .finish)
        // Load ends at 3 s, the grace at 4 s, the graceful stop's deadline at 6 s closes what is left.
        #expect(all == [.stopArrivals, .beginGracefulStop, .closeAll, .finish])
        #expect(sequence.reason == .duration)
    }
}
