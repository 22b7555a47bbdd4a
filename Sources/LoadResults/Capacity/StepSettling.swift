import Foundation

/// Whether the server has settled enough for the next `capacity` step to start: the previous step's
/// sessions gone and, when the server is monitored, its CPU and its connections back near their idle
/// level. A value fed observations (every second or so, from the generator's live-session count and
/// a `ProcessSampler`/scrape of the server) that answers `wait` or `start` with the step's recorded
/// start state. No clock and no I/O: `at` is seconds since the wait began.
///
/// The rules:
/// - the generator holds no session of the previous step (`generatorSessions == 0`);
/// - a monitored server's CPU is at most `max(idleCPU × cpuFactor, idleCPU + cpuMarginPercent)`
///   (percent of one core; `idleCPU` measured before the first step; without it, `cpuMarginPercent`),
///   in `quietObservations` observations in a row — a gap (nil) breaks the row, since an unseen
///   server is not known to be idle;
/// - its connections (open descriptors or a connection gauge) are at most `idle + max(connectionMargin,
///   connectionShare × idle)`, when both are known;
/// - at least `minimumWaitSeconds` passed (the server's own timers, its accept queue);
/// - after `timeoutSeconds` the step starts anyway, recorded as not settled with what was not.
public struct StepSettling: Sendable, Equatable {
    /// The thresholds above.
    public struct Rules: Sendable, Equatable {
        public var timeoutSeconds = 60.0
        public var minimumWaitSeconds = 2.0
        public var quietObservations = 2
        public var cpuFactor = 1.5
        public var cpuMarginPercent = 5.0
        public var connectionMargin = 10.0
        public var connectionShare = 0.05

        public init() {}
    }

    /// What was seen at one moment of the wait.
    public struct Observation: Sendable, Equatable {
        /// Seconds since the wait began.
        public var at: Double
        /// Sessions the generator still holds.
        public var generatorSessions: Int
        /// The server's CPU over the last second or so, in percent of one core; nil: not monitored, or a gap.
        public var serverCPUPercent: Double?
        /// The server's connections (open descriptors, or a connection gauge); nil: unknown.
        public var serverConnections: Double?

        public init(at: Double, generatorSessions: Int, serverCPUPercent: Double? = nil, serverConnections: Double? = nil) {
            self.at = at
            self.generatorSessions = generatorSessions
            self.serverCPUPercent = serverCPUPercent
            self.serverConnections = serverConnections
        }
    }

    /// What to do now.
    public enum Decision: Sendable, Equatable {
        case wait
        case start(StepStartState)
    }

    /// The server when idle, measured before the first step (nil: unknown).
    public var idleCPUPercent: Double?
    public var idleConnections: Double?
    /// Whether the server's CPU is monitored at all (then a gap is not "idle").
    public var monitored: Bool
    public var rules: Rules
    private var quietInARow = 0

    public init(monitored: Bool, idleCPUPercent: Double? = nil, idleConnections: Double? = nil, rules: Rules = Rules()) {
        self.monitored = monitored
        self.idleCPUPercent = idleCPUPercent
        self.idleConnections = idleConnections
        self.rules = rules
    }

    /// The idle level from observations taken before the first step: the median (robust to one busy
    /// moment); nil when there are none.
    public static func idleLevel(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The CPU ceiling for "idle", in percent of one core.
    public var cpuCeiling: Double {
        guard let idle = idleCPUPercent else { return rules.cpuMarginPercent }
        return max(idle * rules.cpuFactor, idle + rules.cpuMarginPercent)
    }

    /// The connection ceiling for "idle"; nil when the idle level is unknown.
    public var connectionCeiling: Double? {
        idleConnections.map { $0 + max(rules.connectionMargin, rules.connectionShare * $0) }
    }

    public mutating func observe(_ observation: Observation) -> Decision {
        var unsettled: [String] = []
        if observation.generatorSessions > 0 {
            unsettled.append("\(observation.generatorSessions) session(s) of the previous step still open")
        }
        if monitored {
            if let cpu = observation.serverCPUPercent, cpu <= cpuCeiling {
                quietInARow += 1
            } else {
                quietInARow = 0
            }
            if quietInARow < rules.quietObservations {
                if let cpu = observation.serverCPUPercent {
                    unsettled.append(
                        "server CPU \(Self.format(cpu)) % of a core, above its idle ceiling \(Self.format(cpuCeiling)) %"
                            + (cpu <= cpuCeiling ? " until just now" : ""))
                } else {
                    unsettled.append("server CPU unseen (a gap)")
                }
            }
        }
        if let connections = observation.serverConnections, let ceiling = connectionCeiling, connections > ceiling {
            unsettled.append("server holds \(Self.format(connections)) connections, idle is \(Self.format(idleConnections ?? 0))")
        }
        let state = StepStartState(
            settled: unsettled.isEmpty, waitedSeconds: observation.at, generatorSessions: observation.generatorSessions,
            serverCPUPercent: observation.serverCPUPercent, idleCPUPercent: monitored ? idleCPUPercent : nil,
            serverConnections: observation.serverConnections,
            reason: unsettled.isEmpty
                ? (monitored ? "settled: no sessions left, server CPU at its idle level" : "settled: no sessions left (server not monitored)")
                : "not settled after \(Self.format(observation.at)) s: " + unsettled.joined(separator: "; "))
        if unsettled.isEmpty && observation.at >= rules.minimumWaitSeconds { return .start(state) }
        if observation.at >= rules.timeoutSeconds {
            var timedOut = state
            timedOut.settled = false
            if unsettled.isEmpty { timedOut.reason = "not settled: the minimum wait was longer than the timeout" }
            return .start(timedOut)
        }
        return .wait
    }

    static func format(_ value: Double) -> String {
        value >= 10 || value == value.rounded() ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }
}
