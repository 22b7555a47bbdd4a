import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import NIOCore
import NIOHTTP1
import Synchronization

/// The run's side of the control port: answers the requests (`ControlRequest`) and keeps the
/// control state; every accepted change goes to the run through its `RunSteering`, which records it
/// and hands it to the loops' arrival drivers.
///
/// Thread safety: requests arrive on the HTTP connections' event loops; the control state is behind
/// one `Mutex` (a change is computed and recorded under it, so changes keep their order). The first
/// change takes the load over from the plan (see `ControlState`). `/status` reads the run's last
/// interval and whether it is stopping from the steering.
final class ControlHub: Sendable {
    private struct Shared {
        var state: ControlState?
        /// The plan's phase at the takeover (drivers use its session cap and end).
        var phase = 0
        /// A stop was asked here (the run may not have begun stopping yet).
        var stopAsked = false
    }

    private let shared = Mutex(Shared())
    private let steering: RunSteering
    private let plan: LoadPlan
    private let limits: ControlLimits?

    init(steering: RunSteering) {
        self.steering = steering
        plan = steering.plan
        let configuration = steering.configuration
        let segment = configuration.segment
        let accounts = configuration.accounts
        limits = ControlState.planLoad(plan, at: 0).map {
            ControlLimits(
                model: $0.model, maxSessions: accounts.count * max(segment.count, 1),
                accountsText: "--accounts \(accounts.lowerBound)-\(accounts.upperBound)"
                    + (segment.count > 1 ? " on each of \(segment.count) generators" : ""))
        }
    }

    /// Seconds since the run's start, now.
    private var elapsed: Double { steering.elapsed }

    // MARK: - Requests

    /// Answers one HTTP request (on the connection's loop; never blocks).
    func respond(_ request: SmallHTTPServer.Request) -> SmallHTTPServer.Reply {
        do throws(ControlRefusal) {
            let parsed = try ControlRequest.parse(method: request.method, uri: request.uri, body: request.body)
            return Self.json(.ok, try handle(parsed))
        } catch {
            return Self.json(HTTPResponseStatus(statusCode: error.status), ["error": error.message, "status": error.status])
        }
    }

    private func handle(_ request: ControlRequest) throws(ControlRefusal) -> [String: Any] {
        let now = elapsed
        if case .status = request { return status(at: now) }
        guard let limits, let planned = ControlState.planLoad(plan, at: now) else {
            throw ControlRefusal(409, "the run has no load plan to steer")
        }
        let outcome: Result<(ControlState, Int, ControlEvent)?, ControlRefusal> = shared.withLock { shared in
            if shared.stopAsked || steering.isStopping {
                return .failure(ControlRefusal(409, "the run is stopping: nothing can change now"))
            }
            var state = shared.state ?? ControlState(model: planned.model, takeover: now, value: planned.value)
            let phase = shared.state == nil ? planned.phase : shared.phase
            let event: ControlEvent
            switch request {
            case .status: return .success(nil)
            case .load(let change):
                let value: Double
                do throws(ControlRefusal) { value = try limits.check(change) } catch { return .failure(error) }
                let from = state.setLoad(value, over: change.over, at: now)
                let unit = state.model == .open ? "/s" : ""
                let what = state.model == .open ? "rate" : "sessions"
                event = ControlEvent(
                    at: now, action: "load", rate: change.rate, sessions: change.sessions, over: change.over, from: from,
                    text: "\(what) \(ControlRequest.format(Self.round(from)))\(unit) → \(ControlRequest.format(value))\(unit)"
                        + (change.over > 0 ? " over \(DurationText.format(.nanoseconds(Int64(change.over * 1e9))))" : ""))
            case .pause:
                guard state.pause(at: now) else { return .failure(ControlRefusal(409, "arrivals are already paused")) }
                event = ControlEvent(at: now, action: "pause", text: "arrivals paused")
            case .resume:
                guard state.resume(at: now) else { return .failure(ControlRefusal(409, "arrivals are not paused")) }
                event = ControlEvent(at: now, action: "resume", text: "arrivals resumed")
            case .stop:
                shared.stopAsked = true
                steering.record(ControlEvent(at: now, action: "stop", text: "stop asked (graceful, as SIGINT)"))
                return .success(nil)
            }
            shared.state = state
            shared.phase = phase
            // Recorded under the lock, so the run writes changes in the order they were made.
            steering.record(event)
            return .success((state, phase, event))
        }
        switch outcome {
        case .failure(let refusal): throw refusal
        case .success(let change?):
            steering.apply(change.0, phase: change.1)
            var answer = status(at: now)
            answer["accepted"] = change.2.text
            return answer
        case .success(nil):
            if case .stop = request { steering.requestStop(reason: .interrupted) }
            var answer = status(at: now)
            answer["accepted"] = "stop asked: sessions log out, results are written"
            return answer
        }
    }

    /// `GET /status`'s answer (also the body of every accepted change).
    func status(at now: Double) -> [String: Any] {
        let (state, stopAsked) = shared.withLock { ($0.state, $0.stopAsked) }
        let (stopping, last, eventCount) = (stopAsked || steering.isStopping, steering.latestInterval, steering.changeCount)
        let planned = ControlState.planLoad(plan, at: now)
        let model = state?.model ?? planned?.model
        var answer: [String: Any] = [
            "elapsed_s": Self.round(now), "live_sessions": steering.liveSessionCount, "controlled": state != nil,
            "paused": state?.isPaused(at: now) ?? false, "control_events": eventCount,
        ]
        if let model { answer["model"] = model.rawValue }
        let asked = state?.asked(at: now) ?? planned?.value
        let ramping = state.map { $0.isRamping(at: now) } ?? Self.planIsRamping(plan, at: now)
        answer["phase"] = stopping ? "stopping" : (ramping ? "ramp" : "steady")
        if let last {
            let seconds = max(last.end - last.start, 1e-9)
            let login = last.latency["login"]
            var figures: [String: Any] = [
                "start_s": Self.round(last.start), "end_s": Self.round(last.end),
                "started": Int(last.counter(.sessionsStarted)), "logins": Int(last.counter(.sessionsLoggedIn)),
                "failures": Int(last.counter(.sessionsFailed)), "completed": Int(last.counter(.sessionsCompleted)),
                "messages_sent": Int(last.counter(.messagesSent)), "messages_received": Int(last.counter(.messagesReceived)),
                "dropped_arrivals": Int(last.counter(.droppedArrivals)), "online": Int(last.gauge(.online)),
                "logins_per_s": Self.round(Double(last.counter(.sessionsLoggedIn)) / seconds),
            ]
            if let login, !login.isEmpty {
                figures["login_p50_ms"] = Self.round(login.milliseconds(atPercentile: 50))
                figures["login_p99_ms"] = Self.round(login.milliseconds(atPercentile: 99))
            }
            answer["last_interval"] = figures
            answer["online"] = Int(last.gauge(.online))
            if model == .open { answer["rate_achieved"] = Self.round(Double(last.counter(.sessionsStarted)) / seconds) }
        }
        if let asked {
            if model == .open { answer["rate_asked"] = Self.round(asked) } else { answer["target_sessions"] = Int(asked.rounded()) }
        }
        if let limits { answer["max_sessions"] = limits.maxSessions }
        return answer
    }

    /// True while the plan's current phase ramps (a closed ramp, users or rate growing).
    static func planIsRamping(_ plan: LoadPlan, at t: Double) -> Bool {
        var start = 0.0
        for phase in plan.phases {
            let length = phase.duration.seconds
            if t < start + length || phase.endsWhenIdle {
                switch phase.model {
                case .closed(_, let ramp): return t - start < ramp.seconds
                case .rampingUsers(let from, let to): return from != to
                case .openRamping(let from, let to): return from != to
                case .openConstant: return false
                }
            }
            start += length
        }
        return false
    }

    // MARK: - JSON

    static func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    static func json(_ status: HTTPResponseStatus, _ object: [String: Any]) -> SmallHTTPServer.Reply {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return SmallHTTPServer.Reply(status: status, contentType: "application/json", body: Array(data) + [0x0A])
    }
}
