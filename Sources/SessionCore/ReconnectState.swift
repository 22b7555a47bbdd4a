// Reconnects and churn: whether a dropped session comes back, and how many tries it has made.
import LoadProfile

/// A session's reconnect bookkeeping under its profile's `reconnect:` policy: only a session that
/// logged in at least once comes back; attempts count in a row since the last successful login; a
/// churn (`--churn`) starts the count again. What it returns decides; the machine closes, waits out
/// the back-off (`ReconnectPolicy.delay`) and logs in again.
struct ReconnectState: Equatable {
    /// Logged in at least once (only such a session reconnects).
    private(set) var hasLoggedIn = false
    /// Reconnects in a row since the last successful login.
    private(set) var attempt = 0
    /// The login in progress is a reconnect.
    private(set) var isReconnecting = false

    /// Whether a drop with `error` while connecting, logging in or running is followed by a reconnect.
    func allows(after error: SessionError, policy: ReconnectPolicy, stopping: Bool) -> Bool {
        policy.isEnabled && hasLoggedIn && !stopping && attempt < policy.attempts && error.isConnectionDrop
    }

    /// One more try in a row; returns its number (for the back-off).
    mutating func nextAttempt() -> Int {
        attempt += 1
        return attempt
    }

    /// A churn: the session comes back as after a first drop.
    mutating func churned() { attempt = 0 }

    /// The back-off ended: the next login is a reconnect.
    mutating func reconnecting() { isReconnecting = true }

    /// A login (or resumption) succeeded.
    mutating func loggedIn() {
        hasLoggedIn = true
        isReconnecting = false
        attempt = 0
    }
}
