import Foundation

/// Whether the server has settled enough for the next `capacity` step to start: the previous step's
/// sessions gone, a new connection answered about as fast as when idle (`ServerAnswerProbe`) and,
/// when the server is monitored, its CPU and its connections back near their idle level. A value fed observations (every second or so, from the generator's live-session count and
/// a `ProcessSampler`/scrape of the server) that answers `wait` or `start` with the step's recorded
/// start state. No clock and no I/O: `at` is seconds since the wait began.
///
/// The rules:
/// - the generator holds no session of the previous step (`generatorSessions == 0`);
/// - a monitored server's CPU is at most `max(idleCPU × cpuFactor, idleCPU + cpuMarginPercent)`
///   (percent of one core; `idleCPU` measured before the first step; without it, `cpuMarginPercent`),
///   and a probed server's answer to a new connection within `max(idleAnswer × answerFactor,
///   idleAnswer + answerMarginMilliseconds)`, in `quietObservations` observations in a row — a gap
///   (nil CPU) breaks the row, since an unseen server is not known to be idle;
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
        public var answerFactor = 3.0
        public var answerMarginMilliseconds = 50.0

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
        /// How long a new connection waited for the server's first answer, milliseconds; nil: not probed.
        public var answerMilliseconds: Double?

        public init(
            at: Double, generatorSessions: Int, serverCPUPercent: Double? = nil, serverConnections: Double? = nil,
            answerMilliseconds: Double? = nil
        ) {
            self.at = at
            self.generatorSessions = generatorSessions
            self.serverCPUPercent = serverCPUPercent
            self.serverConnections = serverConnections
            self.answerMilliseconds = answerMilliseconds
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
    /// A new connection's wait for the server's answer when idle, milliseconds (nil: not probed).
    public var idleAnswerMilliseconds: Double?
    /// Whether the server's CPU is monitored at all (then a gap is not "idle").
    public var monitored: Bool
    public var rules: Rules
    private var quietInARow = 0

    public init(
        monitored: Bool, idleCPUPercent: Double? = nil, idleConnections: Double? = nil, idleAnswerMilliseconds: Double? = nil,
        rules: Rules = Rules()
    ) {
        self.monitored = monitored
        self.idleCPUPercent = idleCPUPercent
        self.idleConnections = idleConnections
        self.idleAnswerMilliseconds = idleAnswerMilliseconds
        self.rules = rules
    }

    /// The ceiling of a settled server's answer time, milliseconds; nil when not probed.
    public var answerCeiling: Double? {
        idleAnswerMilliseconds.map { max($0 * rules.answerFactor, $0 + rules.answerMarginMilliseconds) }
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
        let answerCeiling = answerCeiling
        let probed = answerCeiling != nil && observation.answerMilliseconds != nil
        if monitored || probed {
            let cpuQuiet = !monitored || (observation.serverCPUPercent.map { $0 <= cpuCeiling } ?? false)
            let answerQuiet = !probed || observation.answerMilliseconds! <= answerCeiling!
            quietInARow = cpuQuiet && answerQuiet ? quietInARow + 1 : 0
            if quietInARow < rules.quietObservations {
                if monitored {
                    if let cpu = observation.serverCPUPercent {
                        if cpu > cpuCeiling {
                            unsettled.append("server CPU \(Self.format(cpu)) % of a core, above its idle ceiling \(Self.format(cpuCeiling)) %")
                        }
                    } else {
                        unsettled.append("server CPU unseen (a gap)")
                    }
                }
                if probed, let answer = observation.answerMilliseconds, answer > answerCeiling! {
                    unsettled.append(
                        "a new connection waited \(Self.format(answer)) ms for the server's answer (idle \(Self.format(idleAnswerMilliseconds ?? 0)) ms)"
                    )
                }
                if cpuQuiet && answerQuiet {
                    unsettled.append("quiet in \(quietInARow) look(s) in a row of the \(rules.quietObservations) needed")
                }
            }
        }
        if let connections = observation.serverConnections, let ceiling = connectionCeiling, connections > ceiling {
            unsettled.append("server holds \(Self.format(connections)) connections, idle is \(Self.format(idleConnections ?? 0))")
        }
        let state = StepStartState(
            settled: unsettled.isEmpty, waitedSeconds: observation.at, generatorSessions: observation.generatorSessions,
            serverCPUPercent: observation.serverCPUPercent, idleCPUPercent: monitored ? idleCPUPercent : nil,
            serverConnections: observation.serverConnections, answerMilliseconds: observation.answerMilliseconds,
            idleAnswerMilliseconds: probed ? idleAnswerMilliseconds : nil,
            reason: unsettled.isEmpty
                ? (!monitored && !probed
                    ? "settled: no sessions left (server not monitored)"
                    : "settled: "
                        + (["no sessions left"] + (probed ? ["new connections answered as when idle"] : [])
                        + (monitored ? ["server CPU at its idle level"] : [])).joined(separator: ", "))
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
