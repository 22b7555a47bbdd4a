/// The timed phases of one login, in the order they happen.
///
/// Each phase is measured by the session handler from the moment the login machine enters it until
/// the moment it enters the next one (monotonic clock). Phases that a login skips (no TLS, no
/// registration, no session establishment) are simply not recorded. The metric name of each phase is
/// `login.<rawValue>`.
public enum LoginPhase: String, Sendable, CaseIterable {
    /// TCP connect (the handler measures it before the machine starts).
    case connect
    /// Direct TLS handshake (`--tls direct`), or STARTTLS from `<starttls/>` to the handshake's end.
    case tls
    /// From sending the first stream header to receiving `<stream:features>` (after TLS, if any).
    case features
    /// XEP-0077 in-band registration of the account before logging in.
    case register
    /// From `<auth/>` to `<success/>`, including every challenge round trip.
    case sasl
    /// From the post-SASL stream restart to the resource-bind result (includes the features wait).
    case bind
    /// RFC 3921 session establishment, only when the server requires it.
    case session
    /// XEP-0198 resumption: from sending `<resume/>` to `<resumed/>` or `<failed/>` (a resumed login
    /// binds nothing; a failed one binds next, in `bind`).
    case resume

    /// The metric name under which this phase is recorded.
    public var metricName: String { "login.\(rawValue)" }
}
