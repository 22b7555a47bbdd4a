/// The load a run planned, for `manifest.json`: its phases (name, model as text, length, cap), when
/// the load stops and the graceful-stop timeout. Seconds. Two runs with equal `PlannedLoad` and
/// seed asked the server for the same work.
public struct PlannedLoad: Codable, Sendable, Equatable {
    /// One phase: `name`, its load as people write it (`100 users, ramp 10s, 1m`, `5/s for 30s`).
    public struct Phase: Codable, Sendable, Equatable {
        public var name: String
        public var load: String
        public var durationSeconds: Double
        public var maxSessions: Int?
        enum CodingKeys: String, CodingKey {
            case name, load
            case durationSeconds = "duration_s"
            case maxSessions = "max_sessions"
        }
        public init(name: String, load: String, durationSeconds: Double, maxSessions: Int? = nil) {
            self.name = name
            self.load = load
            self.durationSeconds = durationSeconds
            self.maxSessions = maxSessions
        }
    }

    /// The one-line description (`closed: 100 users, ramp 10s, 20s (cap 20s)`).
    public var summary: String
    public var phases: [Phase]
    /// When the load stops (nil: when every session finished).
    public var stopAfterSeconds: Double?
    public var gracefulStopSeconds: Double

    enum CodingKeys: String, CodingKey {
        case summary, phases
        case stopAfterSeconds = "stop_after_s"
        case gracefulStopSeconds = "graceful_stop_s"
    }

    public init(summary: String, phases: [Phase], stopAfterSeconds: Double?, gracefulStopSeconds: Double) {
        self.summary = summary
        self.phases = phases
        self.stopAfterSeconds = stopAfterSeconds
        self.gracefulStopSeconds = gracefulStopSeconds
    }
}
