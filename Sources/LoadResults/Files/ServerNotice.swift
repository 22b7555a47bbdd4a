/// Something the run asked of the server that the server did not do, and what the session did
/// instead — said, never silent (issue 26's "asked for, not available"): presence not echoed, pings
/// answered with an error, logouts unanswered, stream management not offered, SRV targets that
/// refused connects (the sessions fell back to the next target), and whatever a session feature
/// registered a counter notice for (extension steps the server does not support: carbons, CSI, MAM,
/// PEP, blocking). Counted per session
/// (or login) from the run's counters; `summary.json`'s `notices`, the text report and report.html.
public struct ServerNotice: Codable, Sendable, Equatable {
    /// A stable name: `presence-not-echoed`, `pings-unsupported`, `logout-unanswered`,
    /// `stream-management-not-offered`, `endpoint-fallbacks`, `carbons-unsupported`, `csi-unsupported`,
    /// `mam-unsupported`, `pep-unsupported`.
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

    /// Each notice: the counter that counts it, its kind and its text for a count (`total` gives
    /// the text access to other counters).
    private static let table: [(counter: Counter, kind: String, text: @Sendable (UInt64, IntervalSnapshot) -> String)] = [
        (
            .presenceEchoMissing, "presence-not-echoed",
            { count, total in
                let late = total.counter(.presenceEchoLate)
                return "the server did not echo initial presence (RFC 6121 §4.2.2) within the presence step's wait for \(count) session(s)"
                    + (late > 0 ? " (\(late) echoes came later)" : "")
                    + "; those steps completed unmeasured (docs/PROFILES.md, \"When the server stays silent\")"
            }
        ),
        (
            .pingsUnsupported, "pings-unsupported",
            { count, _ in
                "the server answered keep-alive pings with an error (XEP-0199 not supported) for \(count) session(s); they were not counted as round trips and those sessions kept alive with whitespace"
            }
        ),
        (
            .logoutsUnanswered, "logout-unanswered",
            { count, _ in
                "the server neither answered nor closed \(count) logout(s) (</stream:stream>); those sessions completed, their logout unmeasured"
            }
        ),
        (
            .streamManagementNotOffered, "stream-management-not-offered",
            { count, _ in
                "stream management (XEP-0198) was asked for but not offered (or only a pre-standard namespace) at \(count) login(s); those sessions ran without it"
            }
        ),
        (
            .endpointFallbacks, "endpoint-fallbacks",
            { count, _ in
                "\(count) connect(s) to a DNS SRV target failed (refused, timed out, unreachable) and went on to the next target of the session's RFC 2782 order; the node table shows where sessions ended up"
            }
        ),
    ]

    /// The notices the counters of `total` call for, in a fixed order; empty when there are none.
    /// The fixed counters' notices first, then the registered counters' (`CounterNotice`, carried by
    /// the snapshots), by counter name.
    public static func notices(_ total: IntervalSnapshot) -> [ServerNotice] {
        let fixed = table.compactMap { entry in
            let count = total.counter(entry.counter)
            return count > 0 ? ServerNotice(kind: entry.kind, count: count, text: entry.text(count, total)) : nil
        }
        let registered = (total.counterNotices ?? [:]).sorted { $0.key < $1.key }.compactMap { name, notice -> ServerNotice? in
            let count = total.counters[name] ?? 0
            return count > 0 ? ServerNotice(kind: notice.kind, count: count, text: notice.text(count: count)) : nil
        }
        return fixed + registered
    }
}
