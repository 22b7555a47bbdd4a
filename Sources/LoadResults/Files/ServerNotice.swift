/// Something the run asked of the server that the server did not do, and what the session did
/// instead — said, never silent (issue 26's "asked for, not available"): presence not echoed, pings
/// answered with an error, logouts unanswered, stream management not offered, SRV targets that
/// refused connects (the sessions fell back to the next target). Counted per session
/// (or login) from the run's counters; `summary.json`'s `notices`, the text report and report.html.
public struct ServerNotice: Codable, Sendable, Equatable {
    /// A stable name: `presence-not-echoed`, `pings-unsupported`, `logout-unanswered`,
    /// `stream-management-not-offered`, `endpoint-fallbacks`.
    public var kind: String
    /// Sessions (or logins) it happened to.
    public var count: UInt64
    /// One line for a person: what happened and what the session did instead.
    public var text: String

    public init(kind: String, count: UInt64, text: String) {
        self.kind = kind
        self.count = count
        self.text = text
    }

    /// The notices the counters of `total` call for, in a fixed order; empty when there are none.
    public static func notices(_ total: IntervalSnapshot) -> [ServerNotice] {
        var notices: [ServerNotice] = []
        let missing = total.counter(.presenceEchoMissing)
        if missing > 0 {
            let late = total.counter(.presenceEchoLate)
            notices.append(
                ServerNotice(
                    kind: "presence-not-echoed", count: missing,
                    text:
                        "the server did not echo initial presence (RFC 6121 §4.2.2) within the presence step's wait for \(missing) session(s)"
                        + (late > 0 ? " (\(late) echoes came later)" : "")
                        + "; those steps completed unmeasured (docs/PROFILES.md, \"When the server stays silent\")"))
        }
        let pings = total.counter(.pingsUnsupported)
        if pings > 0 {
            notices.append(
                ServerNotice(
                    kind: "pings-unsupported", count: pings,
                    text:
                        "the server answered keep-alive pings with an error (XEP-0199 not supported) for \(pings) session(s); they were not counted as round trips and those sessions kept alive with whitespace"
                ))
        }
        let logouts = total.counter(.logoutsUnanswered)
        if logouts > 0 {
            notices.append(
                ServerNotice(
                    kind: "logout-unanswered", count: logouts,
                    text:
                        "the server neither answered nor closed \(logouts) logout(s) (</stream:stream>); those sessions completed, their logout unmeasured"
                ))
        }
        let management = total.counter(.streamManagementNotOffered)
        if management > 0 {
            notices.append(
                ServerNotice(
                    kind: "stream-management-not-offered", count: management,
                    text:
                        "stream management (XEP-0198) was asked for but not offered (or only a pre-standard namespace) at \(management) login(s); those sessions ran without it"
                ))
        }
        let fallbacks = total.counter(.endpointFallbacks)
        if fallbacks > 0 {
            notices.append(
                ServerNotice(
                    kind: "endpoint-fallbacks", count: fallbacks,
                    text:
                        "\(fallbacks) connect(s) to a DNS SRV target failed (refused, timed out, unreachable) and went on to the next target of the session's RFC 2782 order; the node table shows where sessions ended up"
                ))
        }
        return notices
    }
}
