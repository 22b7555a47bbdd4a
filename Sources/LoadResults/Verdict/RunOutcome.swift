/// The run's own verdict, independent of thresholds: did the sessions do what the plan asked?
///
/// It judges the whole profile, not login alone: `ran-as-planned` only when the load ran as planned,
/// no session failed, no message was lost and no arrival was dropped. Otherwise the kind says what
/// went wrong and `work` holds planned against done (sessions, messages, errors by kind).
/// `failed` (exit 1) is the run that did not work at all: no session started, none logged in, the
/// server unreachable at start, or no session completed its profile. `kind` is also what
/// `stop_reason` says when the run did not work.
///
/// | kind | when | exit |
/// |---|---|---|
/// | `ran-as-planned` | every session completed; no loss, no dropped arrival | 0 |
/// | `sessions-failed` | some sessions ended with an error, at least one completed | 0 (thresholds decide) |
/// | `messages-lost` | sessions fine, messages lost | 0 (thresholds decide) |
/// | `arrivals-dropped` | the generator dropped arrivals it could not start in time | 0 (thresholds decide) |
/// | `cut-short` | interrupted or stopped by `--abort-on-fail` | 130 / 99 |
/// | `no-session-completed` | sessions logged in but every one ended with an error | 1 |
/// | `no-session-logged-in`, `server-unreachable`, `no-session-started` | nothing ran | 1 |
public struct RunOutcome: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The sessions did what the plan asked: none failed, nothing lost, nothing dropped.
        case ranAsPlanned = "ran-as-planned"
        /// Some sessions ended with an error (at least one completed its profile).
        case sessionsFailed = "sessions-failed"
        /// Sessions completed but messages were lost.
        case messagesLost = "messages-lost"
        /// The generator dropped arrivals it could not start in time (rule 2).
        case arrivalsDropped = "arrivals-dropped"
        /// Sessions logged in but the run was cut short (interrupted, `--abort-on-fail`).
        case cutShort = "cut-short"
        /// Sessions logged in, but every session ended with an error: none completed its profile.
        case noSessionCompleted = "no-session-completed"
        /// Sessions started and none logged in.
        case noSessionLoggedIn = "no-session-logged-in"
        /// The first sessions could not connect at all (refused, timed out, unreachable).
        case serverUnreachable = "server-unreachable"
        /// No session was started (every arrival dropped, or the run stopped at once).
        case noSessionStarted = "no-session-started"
    }

    public var kind: Kind
    /// One line saying why, for the console and reports.
    public var reason: String
    /// Planned against done (nil in summaries written before 0.2).
    public var work: RunWork?

    public init(kind: Kind, reason: String, work: RunWork? = nil) {
        self.kind = kind
        self.reason = reason
        self.work = work
    }

    /// True when the run did not work at all (exit 1): no session started, none logged in, the
    /// server unreachable at start, or no session completed its profile.
    public var failed: Bool {
        switch kind {
        case .noSessionLoggedIn, .serverUnreachable, .noSessionStarted, .noSessionCompleted: return true
        case .ranAsPlanned, .sessionsFailed, .messagesLost, .arrivalsDropped, .cutShort: return false
        }
    }

    /// Error kinds that mean "could not reach the server".
    public static let unreachableKinds: Set<String> = ["connect-refused", "connect-timeout", "network-unreachable", "connect-failed"]
}

/// What the plan asked of this generator and what its sessions did: the counts behind a
/// `RunOutcome`. Planned figures are nil when the plan cannot know them (a run until every session
/// finished, messages sent until the load stops).
public struct RunWork: Sendable, Equatable, Codable {
    public var sessionsPlanned: Int?
    public var sessionsStarted: UInt64
    public var sessionsLoggedIn: UInt64
    /// Sessions that ran their profile to its end (or to the load's end) and logged out.
    public var sessionsCompleted: UInt64
    /// Sessions that ended with an error.
    public var sessionsFailed: UInt64
    public var droppedArrivals: UInt64
    public var messagesPlanned: Int?
    public var messagesSent: UInt64
    public var messagesReceived: UInt64
    /// nil when this generator cannot judge loss alone (one of several generators: `report` reconciles).
    public var messagesLost: UInt64?
    /// Errors by kind (the ten most frequent).
    public var errors: [String: UInt64]

    enum CodingKeys: String, CodingKey {
        case sessionsPlanned = "sessions_planned"
        case sessionsStarted = "sessions_started"
        case sessionsLoggedIn = "sessions_logged_in"
        case sessionsCompleted = "sessions_completed"
        case sessionsFailed = "sessions_failed"
        case droppedArrivals = "dropped_arrivals"
        case messagesPlanned = "messages_planned"
        case messagesSent = "messages_sent"
        case messagesReceived = "messages_received"
        case messagesLost = "messages_lost"
        case errors
    }

    public init(
        sessionsPlanned: Int? = nil, sessionsStarted: UInt64 = 0, sessionsLoggedIn: UInt64 = 0, sessionsCompleted: UInt64 = 0,
        sessionsFailed: UInt64 = 0, droppedArrivals: UInt64 = 0, messagesPlanned: Int? = nil, messagesSent: UInt64 = 0,
        messagesReceived: UInt64 = 0, messagesLost: UInt64? = 0, errors: [String: UInt64] = [:]
    ) {
        self.sessionsPlanned = sessionsPlanned
        self.sessionsStarted = sessionsStarted
        self.sessionsLoggedIn = sessionsLoggedIn
        self.sessionsCompleted = sessionsCompleted
        self.sessionsFailed = sessionsFailed
        self.droppedArrivals = droppedArrivals
        self.messagesPlanned = messagesPlanned
        self.messagesSent = messagesSent
        self.messagesReceived = messagesReceived
        self.messagesLost = messagesLost
        self.errors = errors
    }

    /// `sessions: 20 planned, 20 started, 20 logged in, 0 completed, 20 failed; messages: 200 planned,
    /// 0 sent, 0 received, 0 lost; errors: timeout-presence ×20`.
    public var line: String {
        var sessions = [String]()
        if let sessionsPlanned { sessions.append("\(sessionsPlanned) planned") }
        sessions += [
            "\(sessionsStarted) started", "\(sessionsLoggedIn) logged in", "\(sessionsCompleted) completed", "\(sessionsFailed) failed",
        ]
        if droppedArrivals > 0 { sessions.append("\(droppedArrivals) arrivals dropped") }
        var messages = [String]()
        if let messagesPlanned { messages.append("\(messagesPlanned) planned") }
        messages += ["\(messagesSent) sent", "\(messagesReceived) received"]
        messages.append(messagesLost.map { "\($0) lost" } ?? "loss judged by `report` over every generator")
        var text = "sessions: " + sessions.joined(separator: ", ") + "; messages: " + messages.joined(separator: ", ")
        if !errors.isEmpty { text += "; errors: " + Self.topErrors(errors, count: 10) }
        return text
    }

    /// `kind ×count, …`, most frequent first.
    public static func topErrors(_ errors: [String: UInt64], count: Int = 3) -> String {
        errors.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(count)
            .map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}

/// What the plan asks of one generator, for `RunWork`: sessions to start and messages to send
/// (nil when the plan cannot know: a closed model that repeats forever, messages sent until the
/// load stops).
public struct PlannedWork: Sendable, Equatable {
    public var sessions: Int?
    public var messages: Int?

    public init(sessions: Int? = nil, messages: Int? = nil) {
        self.sessions = sessions
        self.messages = messages
    }
}
