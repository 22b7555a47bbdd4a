/// The way a login went, as counted per path (summary.json's `login_paths`). Raw values are the
/// stable metric labels.
public enum LoginPath: String, Sendable, Equatable, CaseIterable {
    /// RFC 6120: SASL, stream restart, resource bind (and session when required).
    case classic
    /// SASL2 (XEP-0388) authentication with a password, then a classic resource bind (no Bind2 offered).
    case sasl2
    /// SASL2 with a password and Bind2 (XEP-0386): authentication and bind in one exchange.
    case sasl2Bind2 = "sasl2-bind2"
    /// SASL2 with a FAST token (XEP-0484), bound inline or classically.
    case fast
    /// An XEP-0198 resumption, classic (`<resume/>` after SASL) or inline in SASL2: nothing was bound.
    case resumed

    /// The latency metric of logins that took this path: `login.path.<rawValue>`.
    public var metricName: String { "login.path.\(rawValue)" }
}
