import LoadProfile
import LoadResults
import NIOCore
import Synchronization
import Testing

@testable import LoadEngine
@testable import RunControl

/// The run's side of the control port without a network: request sequences against an open and a
/// closed plan, each answer's status, what the loops were handed, the stop, and the event list.
@Suite struct ControlHubTests {
    /// What the hub asked of the run.
    final class Recorder: Sendable {
        let applied = Mutex<[ControlState]>([])
        let stops = Mutex(0)
        let steering = Mutex<RunSteering?>(nil)
        /// The steering the hub was given (what the run records and hands out).
        var run: RunSteering { steering.withLock { $0! } }
    }

    static func hub(plan: LoadPlan, accounts: ClosedRange<Int>, recorder: Recorder) -> ControlHub {
        let configuration = RunConfiguration(
            host: "127.0.0.1", port: 5222, domain: "load.test", accounts: accounts, password: "x", outputDirectory: "/tmp/none")
        let steering = RunSteering(
            runStart: .now() - .seconds(5), plan: plan, configuration: configuration, liveSessions: LiveSessionCounter(),
            applyToLoops: { state, _ in recorder.applied.withLock { $0.append(state) } },
            stop: { _ in recorder.stops.withLock { $0 += 1 } })
        recorder.steering.withLock { $0 = steering }
        return ControlHub(steering: steering)
    }

    static func send(_ hub: ControlHub, _ method: String, _ uri: String, _ body: String = "") -> (Int, String) {
        let reply = hub.respond(SmallHTTPServer.Request(method: method, uri: uri, body: Array(body.utf8)))
        return (Int(reply.status.code), String(decoding: reply.body, as: UTF8.self))
    }

    /// One request and the status it must get (and a fragment of its body).
    struct Step: Sendable {
        var method: String
        var uri: String
        var body: String = ""
        var status: Int
        var contains: String
    }

    @Test func anOpenRunIsSteeredAndRefusesWhatItCannotDo() {
        let recorder = Recorder()
        let hub = Self.hub(plan: .open(rate: 10, duration: .seconds(60)), accounts: 1...100, recorder: recorder)
        let steps: [Step] = [
            Step(method: "GET", uri: "/status", status: 200, contains: "\"rate_asked\" : 10"),
            Step(method: "GET", uri: "/status", status: 200, contains: "\"controlled\" : false"),
            Step(method: "POST", uri: "/load", body: #"{"sessions": 5}"#, status: 409, contains: "set \\\"rate\\\""),
            Step(method: "POST", uri: "/resume", status: 409, contains: "not paused"),
            Step(method: "POST", uri: "/load", body: #"{"rate": 40, "over": "10s"}"#, status: 200, contains: "rate 10/s → 40/s over 10s"),
            Step(method: "POST", uri: "/pause", status: 200, contains: "\"paused\" : true"),
            Step(method: "POST", uri: "/pause", status: 409, contains: "already paused"),
            Step(method: "POST", uri: "/load", body: #"{"rate": -1}"#, status: 422, contains: "must not be negative"),
            Step(method: "POST", uri: "/resume", status: 200, contains: "arrivals resumed"),
            Step(method: "POST", uri: "/stop", status: 200, contains: "\"phase\" : \"stopping\""),
            Step(method: "POST", uri: "/stop", status: 409, contains: "stopping"),
            Step(method: "POST", uri: "/load", body: #"{"rate": 5}"#, status: 409, contains: "stopping"),
            Step(method: "DELETE", uri: "/stop", status: 405, contains: "takes POST"),
        ]
        for step in steps {
            let (status, body) = Self.send(hub, step.method, step.uri, step.body)
            #expect(status == step.status, "\(step.method) \(step.uri) \(step.body): \(body)")
            #expect(body.contains(step.contains), "\(step.method) \(step.uri) \(step.body): \(body)")
        }
        // Loops got load, pause and resume (not the refusals, not the stop); the stop asked the run once.
        let applied = recorder.applied.withLock { $0 }
        #expect(applied.count == 3)
        #expect(applied.last.map { $0.model == .open && $0.asked(at: 1e6) == 40 && !$0.isPaused(at: 1e6) } == true)
        #expect(recorder.stops.withLock { $0 } == 1)
        #expect(recorder.run.events.map(\.action) == ["load", "pause", "resume", "stop"])
        #expect(recorder.run.takeNewEvents().count == 4)
        #expect(recorder.run.takeNewEvents().isEmpty, "each event is handed out once")
    }

    @Test func aClosedRunTakesSessionsWithinItsAccounts() {
        let recorder = Recorder()
        let hub = Self.hub(plan: .closed(sessions: 10, ramp: .seconds(1), duration: .seconds(60)), accounts: 1...50, recorder: recorder)
        let steps: [Step] = [
            Step(method: "GET", uri: "/status", status: 200, contains: "\"target_sessions\" : 10"),
            Step(method: "POST", uri: "/load", body: #"{"sessions": 51}"#, status: 422, contains: "only 50 accounts (--accounts 1-50)"),
            Step(method: "POST", uri: "/load", body: #"{"rate": 3}"#, status: 409, contains: "set \\\"sessions\\\""),
            Step(method: "POST", uri: "/load", body: #"{"sessions": 50}"#, status: 200, contains: "sessions 10 → 50"),
            Step(method: "POST", uri: "/load", body: #"{"sessions": 0}"#, status: 200, contains: "sessions 50 → 0"),
        ]
        for step in steps {
            let (status, body) = Self.send(hub, step.method, step.uri, step.body)
            #expect(status == step.status, "\(step.method) \(step.uri) \(step.body): \(body)")
            #expect(body.contains(step.contains), "\(step.method) \(step.uri) \(step.body): \(body)")
        }
        #expect(recorder.applied.withLock { $0.map { $0.asked(at: 1e6) } } == [50, 0])
    }
}
