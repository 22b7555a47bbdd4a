/// The run's own verdict, independent of thresholds: did it run at all, and as planned?
///
/// `kind` is also what `stop_reason` says when the run did not work (`no-session-logged-in`,
/// `server-unreachable`); `completed` only when the load ran as planned.
public struct RunOutcome: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// Sessions logged in and the load ran as planned.
        case ranAsPlanned = "ran-as-planned"
        /// Sessions logged in but the run was cut short (interrupted, `--abort-on-fail`).
        case cutShort = "cut-short"
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

    public init(kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// True when the run did not work at all (exit 1): no session started or logged in, or the server
    /// was unreachable at start.
    public var failed: Bool { kind == .noSessionLoggedIn || kind == .serverUnreachable || kind == .noSessionStarted }

    /// Error kinds that mean "could not reach the server".
    public static let unreachableKinds: Set<String> = ["connect-refused", "connect-timeout", "network-unreachable", "connect-failed"]
}
