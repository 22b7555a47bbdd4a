/// How a session that lost its connection after logging in comes back: up to `attempts` reconnects in
/// a row, each after an exponential back-off with full jitter — a uniformly random wait in
/// `0 ... min(maxDelay, initialDelay × 2^(attempt − 1))` — so a restarted server is not hit by every
/// session at the same instant. A successful login resets the count.
///
/// `attempts == 0` (the default) turns reconnecting off: a drop ends the session, as before.
public struct ReconnectPolicy: Sendable, Equatable {
    public var attempts: Int
    public var initialDelay: Duration
    public var maxDelay: Duration

    public init(attempts: Int = 0, initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(30)) {
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
    }

    public static let off = ReconnectPolicy()

    public var isEnabled: Bool { attempts > 0 }

    /// The back-off ceiling before reconnect number `attempt` (1-based).
    public func ceiling(attempt: Int) -> Duration {
        let doublings = min(max(attempt - 1, 0), 40)
        let grown = initialDelay * (1 << doublings)
        return grown < maxDelay && grown >= .zero ? grown : maxDelay
    }

    /// The wait before reconnect number `attempt`: full jitter over `0 ... ceiling(attempt)`.
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceiling(attempt: attempt)
        let nanos = ceiling.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanos.overflow ? Int64.max : nanos.partialValue &+ ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(total <= 0 ? 0 : Int64.random(in: 0...total, using: &generator))
    }
}
