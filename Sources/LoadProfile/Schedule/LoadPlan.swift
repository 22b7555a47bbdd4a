/// The load a run applies: phases chained end to end, each with a load model, plus a seed, an
/// optional hard cap on the whole run and the graceful-stop timeout.
public struct LoadPlan: Sendable, Equatable {
    public var phases: [LoadPhase]
    /// Stop the load after this long even if phases remain.
    public var durationCap: Duration?
    /// After the load stops, sessions finish their step and log out within this long; then they are closed.
    public var gracefulStop: Duration
    public var seed: UInt64

    public init(phases: [LoadPhase], durationCap: Duration? = nil, gracefulStop: Duration = .seconds(10), seed: UInt64 = 1) {
        self.phases = phases
        self.durationCap = durationCap
        self.gracefulStop = gracefulStop
        self.seed = seed
    }

    /// `--sessions N --ramp R [--duration D]`: N users started evenly over R, each running the
    /// profile once (or until D with `repeat: forever`). Without D the run ends when every user finished.
    public static func closed(sessions: Int, ramp: Duration, duration: Duration?) -> LoadPlan {
        LoadPlan(
            phases: [
                LoadPhase(
                    name: "closed", model: .closed(users: sessions, ramp: ramp),
                    duration: duration ?? ramp, open: duration == nil)
            ],
            durationCap: duration)
    }

    /// `--rate R --duration D`: R new sessions per second for D.
    public static func open(rate: Double, duration: Duration) -> LoadPlan {
        LoadPlan(phases: [LoadPhase(name: "open", model: .openConstant(rate: rate), duration: duration)], durationCap: duration)
    }

    /// When the load stops (sessions then log out): the cap, or the end of the last phase when every
    /// phase has a fixed end; nil when the run ends only once every session finished.
    public var stopAfter: Duration? {
        let phaseTotal = phases.reduce(Duration.zero) { $0 + $1.duration }
        let endsByItself = phases.contains { $0.endsWhenIdle }
        if let durationCap { return endsByItself ? durationCap : min(durationCap, phaseTotal) }
        return endsByItself ? nil : phaseTotal
    }

    /// A one-line description for the manifest and the console.
    public var summary: String {
        phases.map(\.summary).joined(separator: " → ") + (durationCap.map { " (cap \(DurationText.format($0)))" } ?? "")
    }
}

/// One phase of a plan.
public struct LoadPhase: Sendable, Equatable {
    public var name: String
    public var model: LoadModel
    /// How long the phase lasts (arrivals happen within it; closed users repeat until it ends).
    public var duration: Duration
    /// At most this many live sessions; arrivals beyond are dropped.
    public var maxSessions: Int?
    /// A closed phase without an explicit duration: the run waits for its users to finish.
    public var endsWhenIdle: Bool

    public init(name: String, model: LoadModel, duration: Duration, maxSessions: Int? = nil, open: Bool = false) {
        self.name = name
        self.model = model
        self.duration = duration
        self.maxSessions = maxSessions
        self.endsWhenIdle = open
    }

    public var summary: String { "\(name): \(loadText)" }

    /// The summary without the name: `100 users, ramp 10s, 1m`, `5/s for 30s`, `5/s→100/s over 2m`.
    var loadText: String {
        let length = DurationText.format(duration)
        switch model {
        case .closed(let users, let ramp): return "\(users) users, ramp \(DurationText.format(ramp))" + (endsWhenIdle ? "" : ", \(length)")
        case .rampingUsers(let from, let to): return "users \(from)→\(to) over \(length)"
        case .openConstant, .openRamping: return Self.rateText(model) + (isRamp ? " over " : " for ") + length
        }
    }

    private var isRamp: Bool {
        if case .openRamping = model { return true }
        return false
    }

    /// `5/s`, `0.5/s` or `5/s→100/s`: an open model's rate as people write it; "" for closed models.
    static func rateText(_ model: LoadModel) -> String {
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
        switch model {
        case .openConstant(let rate): return "\(number(rate))/s"
        case .openRamping(let from, let to): return "\(number(from))/s→\(number(to))/s"
        case .closed, .rampingUsers: return ""
        }
    }
}

/// How a phase creates sessions.
public enum LoadModel: Sendable, Equatable {
    /// Closed: this many users started evenly over `ramp`.
    case closed(users: Int, ramp: Duration)
    /// Closed: the number of started users grows linearly from `from` to `to` over the phase.
    case rampingUsers(from: Int, to: Int)
    /// Open: a constant arrival rate (sessions per second).
    case openConstant(rate: Double)
    /// Open: the arrival rate changes linearly from `from` to `to` over the phase.
    case openRamping(from: Double, to: Double)

    /// True for the open models (arrivals at a rate, whatever the sessions do); false for the closed ones.
    public var isOpen: Bool {
        switch self {
        case .openConstant, .openRamping: return true
        case .closed, .rampingUsers: return false
        }
    }
}
