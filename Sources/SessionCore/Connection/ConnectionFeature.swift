// A session's connection: where it is in its life, where it connects, backpressure and logout.
import LoadProfile
import LoadResults
import XMPPCore

/// A session's life on its connections — the stage it is in (idle, connecting, logging in, running,
/// logging out, waiting to reconnect, ended) and the decisions that belong to the connection: which
/// endpoint a connect goes to (its first choice, then the next of its RFC 2782 order after a
/// connect-level failure, `SessionHost.fallbackEndpoint`; a resumption's location), the node the
/// session's figures go to, backpressure (a socket that does not drain pauses the program; stalled
/// past `SessionSettings.writeStallTimeout` it ends the session), and the logout's wait for the
/// server's `</stream:stream>`. The engine only performs what it decides.
struct ConnectionFeature {
    /// Where the session is.
    enum Stage: Equatable {
        case idle
        case connecting
        case loggingIn
        case running
        case loggingOut(since: SessionInstant)
        /// Dropped after logging in (or churned: `churned` is true); waiting out the back-off.
        case awaitingReconnect(churned: Bool)
        case ended
    }

    private(set) var stage: Stage = .idle
    /// The try of the current connect: 0 is the first choice, k the k-th fallback.
    private var attempt: Int32 = 0
    /// The endpoint the session fell back to (meaningful while `attempt` > 0).
    private var fallbackEndpoint: Int32 = 0
    /// The socket stopped draining (backpressure): no new step starts until it drains.
    private(set) var writeBlocked = false
    /// When a socket that stopped draining ends the session (`write-stalled`).
    private(set) var stallDeadline: SessionInstant?

    /// How long a logout waits for the server's `</stream:stream>` (or its close of the connection).
    static let logoutWait = Duration.seconds(5)

    init() {}

    /// The node the session's figures go to: its first choice's, or the endpoint it fell back to's.
    func node(_ s: SessionShared) -> ServerNode? {
        attempt == 0 ? s.identity.node : s.host.node(ofEndpoint: Int(fallbackEndpoint))
    }

    /// When a logout stops waiting for the server's `</stream:stream>`.
    var logoutDeadline: SessionInstant? {
        if case .loggingOut(let since) = stage { return since + Self.logoutWait }
        return nil
    }

    var isRunning: Bool { stage == .running }
    var isEnded: Bool { stage == .ended }
    var isLoggingIn: Bool { stage == .loggingIn }

    /// The earliest of this feature's timeouts.
    var deadline: SessionInstant? { [stallDeadline, logoutDeadline].compactMap { $0 }.min() }

    // MARK: - Connecting

    /// Connect to the session's first choice (or, resuming, to the server's location for it).
    mutating func connect(resumeLocation: String?, _ s: inout SessionShared) {
        if stage == .idle {
            s.actions.append(.stageChanged(from: .idle, to: .connecting))
            s.count(.sessionsStarted)
        }
        stage = .connecting
        attempt = 0
        s.actions.append(.connect(ConnectTarget(endpoint: s.identity.endpoint, resumeLocation: resumeLocation)))
    }

    /// The connection is up: the login begins.
    mutating func connected() -> Bool {
        guard stage == .connecting || stage == .loggingIn else { return false }
        stage = .loggingIn
        return true
    }

    /// A connect failed: with several TCP endpoints a connect-level failure (refused, timed out,
    /// unreachable) goes on to the next endpoint of the session's RFC 2782 order within the same login
    /// attempt (counted in `endpoint_fallbacks`; figures go to the new node) and true is returned;
    /// false when the session must hear of the failure (every endpoint failed, or no order). The
    /// login's timeout and latency keep running from its intended start.
    mutating func fallBack(after failure: ConnectionFailure, _ s: inout SessionShared) -> Bool {
        guard stage == .connecting || stage == .loggingIn, attempt < Int32.max,
            let next = s.host.fallbackEndpoint(
                after: failure, attempt: Int(attempt), first: s.identity.endpoint, arrival: s.identity.arrival)
        else { return false }
        attempt += 1
        fallbackEndpoint = Int32(truncatingIfNeeded: next)
        s.count(.endpointFallbacks)
        s.actions.append(.connect(ConnectTarget(endpoint: next, attempt: Int(attempt))))
        return true
    }

    /// The login succeeded (or the stream was resumed): the session runs.
    mutating func loggedIn(_ s: inout SessionShared) {
        stage = .running
        s.actions.append(.stageChanged(from: .connecting, to: .online))
    }

    // MARK: - Backpressure

    /// The socket stopped draining (`writable` false) or drains again: a stall longer than the run's
    /// `--write-stall` ends the session.
    mutating func writability(_ writable: Bool, _ s: SessionShared) {
        writeBlocked = !writable
        stallDeadline = writable ? nil : s.now + s.settings.writeStallTimeout
    }

    /// The stall lasted past its limit.
    mutating func stalled(_ s: SessionShared) -> Bool {
        guard let due = stallDeadline, due <= s.now else { return false }
        stallDeadline = nil
        return true
    }

    // MARK: - Logging out and leaving

    /// Logs out: unavailable presence and `</stream:stream>`, then waits for the server's close.
    mutating func logout(_ s: inout SessionShared) {
        guard stage == .running else { return }
        stage = .loggingOut(since: s.now)
        s.actions.append(.setOnline(false))
        s.send(Stanza.presence(type: "unavailable"))
        s.actions.append(.closeStream)
    }

    /// The server closed its stream (or the connection) while we logged out: the logout is timed.
    mutating func logoutFinished(_ s: inout SessionShared) -> Bool {
        guard case .loggingOut(let since) = stage else { return false }
        s.recordLatency(s.settings.metrics.logout, from: since, serviceFrom: since)
        return true
    }

    /// The logout's wait is over without the server's close: the session completes, its logout
    /// unmeasured (counted: `logouts_unanswered`).
    mutating func logoutUnanswered(_ s: inout SessionShared) -> Bool {
        guard let due = logoutDeadline, due <= s.now else { return false }
        s.count(.logoutsUnanswered)
        return true
    }

    /// Leaves the current connection after a drop or a churn, for a reconnect or a resumption:
    /// takes the session off the targets, forgets the connection's backpressure, closes.
    mutating func leave(churned: Bool, _ s: inout SessionShared) {
        if stage == .running { s.actions.append(.stageChanged(from: .online, to: .connecting)) }
        s.actions.append(.setOnline(false))
        writeBlocked = false
        stallDeadline = nil
        stage = .awaitingReconnect(churned: churned)
        s.actions.append(.close)
    }

    /// The session is over: records the outcome (`error` nil: completed), frees the account, closes.
    /// Returns false when it had ended already.
    mutating func finish(_ error: SessionError?, failure: SessionFailure?, _ s: inout SessionShared) -> Bool {
        let gauge: SessionStage
        switch stage {
        case .idle: gauge = .idle
        case .connecting, .loggingIn, .awaitingReconnect: gauge = .connecting
        case .running, .loggingOut: gauge = .online
        case .ended: return false
        }
        stage = .ended
        stallDeadline = nil
        s.actions.append(.stageChanged(from: gauge, to: .ended))
        if let error {
            s.recordError(error, node: node(s))
            s.count(.sessionsFailed)
        } else {
            s.count(.sessionsCompleted)
        }
        // One append each: an array literal here would allocate once per session.
        s.actions.append(.setOnline(false))
        s.actions.append(.releaseAccount)
        // Also while still connecting (a login timeout during a hung connect, or the run's deadline):
        // closing frees the socket now instead of at the connect timeout.
        s.actions.append(.close)
        s.actions.append(.ended(failure: failure))
        return true
    }

    /// The login phase the session is in: `connect` while connecting; nil when not logging in.
    func phase(login: LoginPhase?) -> LoginPhase? {
        switch stage {
        case .connecting: return .connect
        case .loggingIn: return login ?? .connect
        case .idle, .running, .loggingOut, .awaitingReconnect, .ended: return nil
        }
    }

    /// Whether a drop now may be followed by a reconnect (the session was connecting, logging in or
    /// running).
    var mayReconnect: Bool {
        switch stage {
        case .connecting, .loggingIn, .running: return true
        case .idle, .loggingOut, .awaitingReconnect, .ended: return false
        }
    }

    /// The back-off ended: connect again.
    mutating func reconnecting(resumeLocation: String?, _ s: inout SessionShared) -> Bool {
        guard case .awaitingReconnect = stage else { return false }
        connect(resumeLocation: resumeLocation, &s)
        return true
    }
}
