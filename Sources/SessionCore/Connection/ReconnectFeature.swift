// Reconnects and churn: whether a dropped session comes back, and when.
import LoadProfile
import LoadResults

/// A session's reconnects under its profile's `reconnect:` policy (or `--reconnect N`): only a
/// session that logged in at least once comes back; attempts count in a row since the last
/// successful login; a churn (`--churn`) starts the count again. It owns the back-off wake-up: the
/// machine closes, this feature waits out `ReconnectPolicy.delay` (full jitter, drawn from the run's
/// seed, so seeded runs back off alike), then the session connects and logs in again.
struct ReconnectFeature {
    /// Logged in at least once (only such a session reconnects).
    private(set) var hasLoggedIn = false
    /// Reconnects in a row since the last successful login.
    private(set) var attempt: Int32 = 0
    /// The login in progress is a reconnect.
    private(set) var isReconnecting = false
    /// Back-offs drawn so far (the jitter's stream position).
    private var draws: UInt32 = 0
    /// When the back-off ends (nil: none running).
    private(set) var wake: SessionInstant?

    /// Whether a drop with `error` is followed by a reconnect under `policy`.
    func allows(after error: SessionError, policy: ReconnectPolicy, stopping: Bool) -> Bool {
        policy.isEnabled && hasLoggedIn && !stopping && Int(attempt) < policy.attempts && error.isConnectionDrop
    }

    /// Arms the back-off of the `attempt`-th try in a row (a drop's or a resumption's).
    mutating func backOff(attempt tries: Int, _ s: SessionShared) {
        var jitter = SeededGenerator(seed: s.settings.seed ^ 0x5EC0_4E77_0000_0000, stream: UInt64(s.identity.serial) << 20 | UInt64(draws))
        draws &+= 1
        wake = s.now + s.script.reconnect.delay(attempt: tries, using: &jitter)
    }

    /// Whether this churn keeps the stream for resumption: drawn against `share` from the same seeded
    /// stream as the back-offs (1: always, 0: never, without a draw).
    mutating func churnResumes(share: Double, _ s: SessionShared) -> Bool {
        if share >= 1 { return true }
        if share <= 0 { return false }
        var generator = SeededGenerator(seed: s.settings.seed ^ 0x0C4E_2A11_0000_0000, stream: UInt64(s.identity.serial) << 20 | UInt64(draws))
        draws &+= 1
        return Double.random(in: 0..<1, using: &generator) < share
    }

    /// One more reconnect in a row; returns its number (for the back-off).
    mutating func nextAttempt() -> Int {
        attempt += 1
        return Int(attempt)
    }

    /// A churn: the session comes back as after a first drop.
    mutating func churned() { attempt = 0 }

    /// The back-off is due: the next login is a reconnect. False when none was running.
    mutating func due(_ s: SessionShared) -> Bool {
        guard let wake, wake <= s.now else { return false }
        self.wake = nil
        isReconnecting = true
        return true
    }

    /// The session ended or gave up: no back-off runs.
    mutating func cancel() { wake = nil }

    /// A login (or resumption) succeeded.
    mutating func loggedIn() {
        hasLoggedIn = true
        isReconnecting = false
        attempt = 0
    }
}
