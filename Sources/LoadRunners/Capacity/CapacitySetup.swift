import LoadEngine
import LoadProfile
import LoadResults

/// Everything a capacity search needs, checked at once (`xmppload capacity` resolves it from its
/// flags): the resolved run options every step starts from, the service-level rules, what load is
/// searched and how (`CapacitySearch.Settings`), and each step's timing. Durations are the step's
/// own: `warmup` not judged, then `hold` judged, snapshots every `interval`.
public struct CapacitySetup: Sendable {
    public var options: ResolvedRun
    public var rules: [Threshold]
    public var dimension: CapacityDimension
    public var settings: CapacitySearch.Settings
    public var warmup: Duration
    public var hold: Duration
    public var interval: Duration
    public var seed: UInt64
    public var gracefulStop: Duration

    public init(
        options: ResolvedRun, rules: [Threshold], dimension: CapacityDimension, settings: CapacitySearch.Settings, warmup: Duration,
        hold: Duration, interval: Duration, seed: UInt64, gracefulStop: Duration
    ) {
        self.options = options
        self.rules = rules
        self.dimension = dimension
        self.settings = settings
        self.warmup = warmup
        self.hold = hold
        self.interval = interval
        self.seed = seed
        self.gracefulStop = gracefulStop
    }

    /// The plan of one step: the asked load for warm-up + hold.
    public func plan(load: Double) -> LoadPlan {
        let total = warmup + hold
        var plan: LoadPlan
        switch dimension {
        case .arrivalRate: plan = .open(rate: load, duration: total)
        case .sessions: plan = .closed(sessions: Swift.max(1, Int(load.rounded())), ramp: warmup, duration: total)
        }
        plan.seed = seed
        plan.gracefulStop = gracefulStop
        return plan
    }

    /// Rounded down to 100 ms, the snapshot interval is at most a sixth of a step, so each step is
    /// judged on at least six intervals.
    public static func stepInterval(flag: Duration, hold: Duration) -> Duration {
        let sixth = hold / 6
        let chosen = Swift.min(flag, sixth)
        let tenths = Swift.max(1, Int64((chosen.seconds * 10).rounded(.down)))
        return .milliseconds(tenths * 100)
    }
}
