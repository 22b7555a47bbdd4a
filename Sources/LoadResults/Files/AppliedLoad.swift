/// The load a run actually applied, for `manifest.json` (from the run's summary): sessions started,
/// logged in and failed, arrivals dropped because the generator was late, peak concurrency, messages
/// sent and how long the run took (seconds). Compared with `PlannedLoad`, it shows whether the
/// server got the work the plan asked for.
public struct AppliedLoad: Codable, Sendable, Equatable {
    public var sessionsStarted: UInt64
    public var sessionsLoggedIn: UInt64
    public var sessionsFailed: UInt64
    public var droppedArrivals: UInt64
    public var peakConcurrent: Int64
    public var messagesSent: UInt64
    public var groupchatSent: UInt64
    public var durationSeconds: Double
    public var saturatedIntervals: Int

    enum CodingKeys: String, CodingKey {
        case sessionsStarted = "sessions_started"
        case sessionsLoggedIn = "sessions_logged_in"
        case sessionsFailed = "sessions_failed"
        case droppedArrivals = "dropped_arrivals"
        case peakConcurrent = "peak_concurrent"
        case messagesSent = "messages_sent"
        case groupchatSent = "groupchat_sent"
        case durationSeconds = "duration_s"
        case saturatedIntervals = "saturated_intervals"
    }

    public init(_ summary: RunSummary) {
        sessionsStarted = summary.sessions.started
        sessionsLoggedIn = summary.sessions.loggedIn
        sessionsFailed = summary.sessions.failed
        droppedArrivals = summary.generator.droppedArrivals
        peakConcurrent = summary.sessions.peakConcurrent
        messagesSent = summary.messages.sent
        groupchatSent = summary.messages.groupchatSent
        durationSeconds = summary.durationSeconds
        saturatedIntervals = summary.generator.saturatedIntervals
    }
}
