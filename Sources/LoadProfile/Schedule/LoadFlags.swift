/// The command line's load flags (`--sessions`, `--ramp`, `--rate`, `--duration`, `--seed`) as typed,
/// turned into the `LoadPlan` a run applies, so that `run` and `plan` read them the same way.
///
/// Rules: `--sessions N [--ramp D]` is a closed model (N users started evenly over D; `--duration`
/// caps the run, else it ends when every user finished); `--rate R --duration D` is an open model;
/// without either, the profile's `load:` section applies, with `--duration` as its cap. `--seed`
/// replaces the plan's seed. Every problem is reported at once.
public struct LoadFlags: Sendable, Equatable {
    public var sessions: Int?
    /// As typed, e.g. `30s`.
    public var ramp: String?
    /// New sessions per second.
    public var rate: Double?
    /// As typed, e.g. `90s`.
    public var duration: String?
    public var seed: UInt64?

    public init(sessions: Int? = nil, ramp: String? = nil, rate: Double? = nil, duration: String? = nil, seed: UInt64? = nil) {
        self.sessions = sessions
        self.ramp = ramp
        self.rate = rate
        self.duration = duration
        self.seed = seed
    }

    /// A duration flag's value as typed (`nil` when not given); a value that is not a duration adds
    /// its problem to `problems` and gives nil. Shared by every command's duration flags.
    public static func duration(_ text: String?, flag: String, problems: inout [String]) -> Duration? {
        guard let text else { return nil }
        guard let value = DurationText.parse(text) else {
            problems.append("\(flag): '\(text)' is not a duration (e.g. 500ms, 90s, 2m, 1h30m)")
            return nil
        }
        return value
    }

    /// The plan these flags ask for over the profile's own plan (nil when the profile has no `load:`).
    public func plan(over profilePlan: LoadPlan?) throws(LoadFlagErrors) -> LoadPlan {
        var problems: [String] = []
        let durationValue = Self.duration(duration, flag: "--duration", problems: &problems)
        let rampValue = Self.duration(ramp, flag: "--ramp", problems: &problems)
        if durationValue == .zero { problems.append("--duration must be longer than zero") }
        if sessions != nil && rate != nil { problems.append("--sessions (closed model) and --rate (open model) exclude each other") }
        if let sessions, !(1...ProfileDecoder.maximumUsers).contains(sessions) {
            problems.append("--sessions must be between 1 and \(ProfileDecoder.maximumUsers), got \(sessions)")
        }
        if let rate, !(rate > 0 && rate <= ProfileDecoder.maximumRate) {
            problems.append("--rate must be greater than 0 and at most \(Int(ProfileDecoder.maximumRate)) per second, got \(rate)")
        }
        if rate != nil && duration == nil { problems.append("--rate needs --duration") }
        if ramp != nil && sessions == nil { problems.append("--ramp goes with --sessions (an open model ramps in the profile's `load:`)") }
        if let rampValue, let durationValue, sessions != nil, rampValue > durationValue {
            problems.append("--ramp (\(DurationText.format(rampValue))) is longer than --duration (\(DurationText.format(durationValue)))")
        }
        if sessions == nil && rate == nil && profilePlan == nil {
            problems.append("no load model: give --sessions N or --rate R --duration D, or a `load:` section in the profile")
        }
        guard problems.isEmpty else { throw LoadFlagErrors(messages: problems) }

        var plan: LoadPlan
        if let sessions {
            plan = .closed(sessions: sessions, ramp: rampValue ?? .zero, duration: durationValue)
        } else if let rate, let durationValue {
            plan = .open(rate: rate, duration: durationValue)
        } else {
            plan = profilePlan!
            if let durationValue { plan.durationCap = durationValue }
        }
        if let seed { plan.seed = seed }
        return plan
    }
}

/// Everything wrong with a set of load flags, one sentence each.
public struct LoadFlagErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var messages: [String]

    public init(messages: [String]) { self.messages = messages }

    public var description: String { messages.joined(separator: "\n") }
}
