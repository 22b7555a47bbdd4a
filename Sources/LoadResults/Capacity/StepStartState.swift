/// How a capacity step started: settled or not, after how long, and what the server showed then —
/// recorded with each step (`CapacityStep`), so a step that started on a busy server says so.
public struct StepStartState: Sendable, Equatable, Codable {
    public var settled: Bool
    /// Seconds waited before the step started.
    public var waitedSeconds: Double
    public var generatorSessions: Int
    /// The server's CPU when the step started, percent of one core; nil when not monitored.
    public var serverCPUPercent: Double?
    /// The idle level it was held against; nil when unknown.
    public var idleCPUPercent: Double?
    public var serverConnections: Double?
    /// How long a new connection waited for the server's answer then, and when idle, milliseconds;
    /// nil when not probed.
    public var answerMilliseconds: Double?
    public var idleAnswerMilliseconds: Double?
    /// One line for people.
    public var reason: String

    enum CodingKeys: String, CodingKey {
        case settled
        case waitedSeconds = "waited_seconds"
        case generatorSessions = "generator_sessions"
        case serverCPUPercent = "server_cpu_percent"
        case idleCPUPercent = "idle_cpu_percent"
        case serverConnections = "server_connections"
        case answerMilliseconds = "answer_ms"
        case idleAnswerMilliseconds = "idle_answer_ms"
        case reason
    }

    public init(
        settled: Bool, waitedSeconds: Double, generatorSessions: Int, serverCPUPercent: Double?, idleCPUPercent: Double?,
        serverConnections: Double?, answerMilliseconds: Double? = nil, idleAnswerMilliseconds: Double? = nil, reason: String
    ) {
        self.answerMilliseconds = answerMilliseconds
        self.idleAnswerMilliseconds = idleAnswerMilliseconds
        self.settled = settled
        self.waitedSeconds = waitedSeconds
        self.generatorSessions = generatorSessions
        self.serverCPUPercent = serverCPUPercent
        self.idleCPUPercent = idleCPUPercent
        self.serverConnections = serverConnections
        self.reason = reason
    }
}
