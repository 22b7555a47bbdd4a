// Failed logins counted by the phase they failed in and their error kind.

/// Failed logins by phase (`connect`, `tls`, `features`, `register`, `sasl`, `bind`, `session`,
/// `resume`) and error kind: `[phase: [kind: count]]`, as `IntervalSnapshot.loginFailures` and
/// summary.json's `login_failures` hold them. Every login that failed is counted once, in the phase
/// it was in (a login timeout in the phase it was stuck in), reconnect logins included.
///
/// Bounded: phases are the eight `LoginPhase` names (anything else folds into `other`), and each
/// phase's kinds are capped like error kinds (`CardinalityCap.errorKinds`). Adding is associative and
/// commutative.
public enum LoginFailures {
    /// The login phases in the order a login goes through them.
    public static let phases = ["connect", "tls", "features", "register", "sasl", "bind", "session", "resume"]

    /// Adds `count` failures of `kind` in `phase`.
    public static func add(phase: String, kind: String, count: UInt64, to failures: inout [String: [String: UInt64]]) {
        let phase = phases.contains(phase) ? phase : "other"
        CardinalityCap.add(kind, count, to: &failures[phase, default: [:]], cap: CardinalityCap.errorKinds, combine: +)
    }

    /// Both added up (nil when both are nil).
    public static func merge(_ lhs: [String: [String: UInt64]]?, _ rhs: [String: [String: UInt64]]?) -> [String: [String: UInt64]]? {
        guard let rhs, !rhs.isEmpty else { return lhs }
        var merged = lhs ?? [:]
        for (phase, kinds) in rhs {
            for (kind, count) in kinds { add(phase: phase, kind: kind, count: count, to: &merged) }
        }
        return merged
    }

    /// Failures per phase (the kinds added up).
    public static func byPhase(_ failures: [String: [String: UInt64]]) -> [String: UInt64] {
        failures.mapValues { $0.values.reduce(0, +) }
    }

    /// The phases of `failures` in login order (`other` last).
    public static func orderedPhases(_ failures: [String: [String: UInt64]]) -> [String] {
        (phases + ["other"]).filter { failures[$0] != nil }
    }
}
