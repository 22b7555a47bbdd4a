import LoadProfile
import SessionCore

/// Decides, as a pure function of plain values, whether a session whose connect failed tries the
/// next endpoint of its RFC 2782 order (`SRVFallbackOrder`) within the same login attempt, and which.
///
/// Only connect-level failures fall back: the target refused the connection, did not answer in
/// time, was unreachable, or the connect failed with no more specific cause. Failures after the
/// connection was established (TLS, SASL, a reset or close of a live stream) and local resource
/// failures (`fd-exhausted`, `addr-not-available`, which another target would not cure) do not.
enum EndpointFallback {
    /// Whether `failure` is a failure to reach the target, so another target may do better.
    static func isConnectLevel(_ failure: ConnectionFailure) -> Bool {
        switch failure {
        case .refused, .timeout, .unreachable, .connectFailed: return true
        default: return false
        }
    }

    /// The endpoint (a position in the run's endpoints) the session tries after `failure` on its
    /// try number `attempt` (0 is its first choice `first`), or nil when it does not fall back:
    /// no order (one endpoint, or a run with web transports), a failure that is not connect-level,
    /// or every endpoint tried. The caller counts the fallback and connects again; on nil it reports
    /// the failure to the session (which counts the error).
    static func next(
        after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int, order: SRVFallbackOrder?
    ) -> Int? {
        guard let order, isConnectLevel(failure) else { return nil }
        return order.endpoint(attempt: attempt + 1, first: first, arrival: arrival)
    }
}
