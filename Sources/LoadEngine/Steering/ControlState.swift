import LoadProfile

/// The load a person asked for through the control port, as a pure function of the run's time
/// (seconds since the run's start): piecewise-linear ramps of the asked value (an arrival rate in
/// sessions per second for an open model, a target of concurrent sessions for a closed one) and the
/// spans during which arrivals are paused.
///
/// Invariants: changes are made at non-decreasing times (`at` is clamped to the last change's time),
/// so the value before a change never moves once set; this is what lets a loop's driver recompute
/// its next arrival from its last one after any change. The first ramp is the takeover: the plan's
/// value at the moment control took the load over, held constant.
public struct ControlState: Sendable, Equatable {
    /// What the asked value counts.
    public enum Model: String, Sendable, Equatable {
        /// Arrivals per second (the plan's phase at the takeover was `rate`/`rate_ramp`).
        case open
        /// Concurrent sessions (the plan's phase was `users`/`users_ramp`).
        case closed
    }

    /// A linear change of the asked value from `from` at `start` to `to` at `end` (then held).
    public struct Ramp: Sendable, Equatable {
        public var start: Double
        public var from: Double
        public var to: Double
        public var end: Double

        func value(at t: Double) -> Double {
            guard t < end, end > start else { return to }
            return from + (to - from) * max(0, t - start) / (end - start)
        }

        func slope(at t: Double) -> Double { t < end && end > start ? (to - from) / (end - start) : 0 }
    }

    /// Arrivals paused from `start` until `end` (nil: still paused).
    public struct Pause: Sendable, Equatable {
        public var start: Double
        public var end: Double?
    }

    public let model: Model
    /// When control took the load over from the plan (seconds since the run's start).
    public let takeover: Double
    /// Ramps in order of their start; each rules from its start until the next one starts.
    public private(set) var ramps: [Ramp]
    /// Paused spans in order; only the last may be open.
    public private(set) var pauses: [Pause] = []

    /// Control takes over at `takeover`, holding `value` (the plan's load at that moment).
    public init(model: Model, takeover: Double, value: Double) {
        self.model = model
        self.takeover = takeover
        ramps = [Ramp(start: takeover, from: value, to: value, end: takeover)]
    }

    /// The time of the latest change (later changes are clamped to it).
    public var lastChange: Double { max(ramps.last?.start ?? takeover, pauses.last.map { $0.end ?? $0.start } ?? takeover) }

    /// The asked value at `t` (ignoring pauses).
    public func asked(at t: Double) -> Double {
        guard let ramp = ramps.last(where: { $0.start <= t }) else { return ramps[0].from }
        return ramp.value(at: t)
    }

    /// True while a ramp is moving the asked value at `t`.
    public func isRamping(at t: Double) -> Bool {
        guard let ramp = ramps.last(where: { $0.start <= t }) else { return false }
        return t < ramp.end && ramp.from != ramp.to
    }

    public func isPaused(at t: Double) -> Bool {
        pauses.contains { $0.start <= t && ($0.end.map { t < $0 } ?? true) }
    }

    /// The rate (or target) that applies at `t`: 0 while paused, else the asked value.
    public func effective(at t: Double) -> Double { isPaused(at: t) ? 0 : asked(at: t) }

    /// From `at` on, the asked value moves linearly from its current value to `value` over `over`
    /// seconds (0: at once). Returns the value it started from.
    @discardableResult
    public mutating func setLoad(_ value: Double, over: Double, at: Double) -> Double {
        let t = max(at, lastChange)
        let from = asked(at: t)
        ramps.append(Ramp(start: t, from: from, to: value, end: t + max(0, over)))
        return from
    }

    /// Pauses arrivals from `at`; false when they already are.
    public mutating func pause(at: Double) -> Bool {
        if let last = pauses.last, last.end == nil { return false }
        pauses.append(Pause(start: max(at, lastChange), end: nil))
        return true
    }

    /// Resumes arrivals from `at`; false when they were not paused.
    public mutating func resume(at: Double) -> Bool {
        guard let last = pauses.last, last.end == nil else { return false }
        pauses[pauses.count - 1].end = max(at, last.start)
        return true
    }

    /// The time `t ≥ start` at which the effective rate's integral from `start` reaches `area`
    /// (how an open model's next arrival is found: each arrival is one unit of that integral);
    /// nil when it never does (the rate stays 0: paused until further notice, or asked 0).
    public func time(after start: Double, area: Double) -> Double? {
        guard area > 0 else { return start }
        var breaks = Set<Double>()
        for ramp in ramps {
            breaks.insert(ramp.start)
            breaks.insert(ramp.end)
        }
        for pause in pauses {
            breaks.insert(pause.start)
            if let end = pause.end { breaks.insert(end) }
        }
        let points = breaks.filter { $0 > start }.sorted()
        var remaining = area
        var a = start
        for b in points + [Double.infinity] {
            let paused = isPaused(at: a)
            let rate = paused ? 0 : max(0, asked(at: a))
            let slope: Double = {
                guard !paused, let ramp = ramps.last(where: { $0.start <= a }) else { return 0 }
                return ramp.slope(at: a)
            }()
            if b == .infinity {
                guard rate > 0 else { return nil }
                return a + remaining / rate
            }
            let width = b - a
            let segment = rate * width + slope * width * width / 2
            if segment >= remaining, segment > 0 {
                // rate·x + slope·x²/2 = remaining, in the form that is stable for either sign of slope.
                let root = (rate * rate + 2 * slope * remaining).squareRoot()
                let denominator = rate + root
                let x = denominator > 0 ? 2 * remaining / denominator : width
                return a + min(max(x, 0), width)
            }
            remaining -= max(0, segment)
            a = b
        }
        return nil
    }

    /// The plan's load at `t` (seconds since the run's start): the model, the value control takes
    /// over (the phase's arrival rate, or its target of users at that moment) and the phase's index.
    /// Past the plan's last phase, that phase's final value.
    public static func planLoad(_ plan: LoadPlan, at t: Double) -> (model: Model, value: Double, phase: Int)? {
        guard !plan.phases.isEmpty else { return nil }
        var start = 0.0
        for (index, phase) in plan.phases.enumerated() {
            let length = phase.duration.seconds
            let isLast = index == plan.phases.count - 1
            if t < start + length || isLast || phase.endsWhenIdle {
                let local = min(max(0, t - start), length)
                let fraction = length > 0 ? local / length : 1
                switch phase.model {
                case .openConstant(let rate): return (.open, rate, index)
                case .openRamping(let from, let to): return (.open, from + (to - from) * fraction, index)
                case .closed(let users, let ramp):
                    let share = ramp.seconds > 0 ? min(1, local / ramp.seconds) : 1
                    return (.closed, (Double(users) * share).rounded(.down), index)
                case .rampingUsers(let from, let to): return (.closed, (Double(from) + Double(to - from) * fraction).rounded(.down), index)
                }
            }
            start += length
        }
        return nil
    }
}
