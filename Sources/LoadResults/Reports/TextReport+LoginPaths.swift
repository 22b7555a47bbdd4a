/// The text report's login-path table (summary.json's `login_paths`).
extension TextReport {
    /// One row per login path that logins took (classic, sasl2, sasl2-bind2, fast, resumed): logins,
    /// of them reconnects, round trips (mean, and `n×count` per number), latency p50/p90/p99/max
    /// from the intended start and the service p99 (from the connect), in ms. Empty when no login
    /// was measured by path.
    public static func renderLoginPaths(_ paths: [String: LoginPathSummary]?) -> String {
        guard let paths, !paths.isEmpty else { return "" }
        var out = "\nlogin paths (ms from the intended start; round trips from the TCP connect to logged in)\n"
        out += pad("path", 14) + pad("logins", 9, right: true) + pad("reconnects", 12, right: true) + pad("round trips", 13, right: true)
        out += pad("p50", 11, right: true) + pad("p90", 11, right: true) + pad("p99", 11, right: true) + pad("max", 11, right: true)
        out += "   service p99   round trips per login\n"
        for (path, figures) in LoginPathSummary.ordered(paths) {
            let p = figures.latencyMilliseconds
            out += pad(path, 14) + pad(String(figures.count), 9, right: true) + pad(String(figures.reconnects), 12, right: true)
            out += pad(String(format: "%.2f", figures.roundTrips.mean), 13, right: true)
            out += pad(formatMs(p.p50), 11, right: true) + pad(formatMs(p.p90), 11, right: true) + pad(formatMs(p.p99), 11, right: true)
            out += pad(formatMs(p.max), 11, right: true)
            out += "   " + pad(figures.serviceLatencyMilliseconds.map { "[\(formatMs($0.p99))]" } ?? "", 14)
            out += roundTripDistribution(figures.roundTrips) + "\n"
        }
        return out
    }

    /// "5×180, 6×20": how many logins took each number of round trips, fewest first.
    static func roundTripDistribution(_ roundTrips: LoginPathSummary.RoundTrips) -> String {
        roundTrips.distribution.compactMap { key, count in Int(key).map { ($0, count) } }.sorted { $0.0 < $1.0 }
            .map { "\($0.0 == LoginPathSummary.maxRoundTrips ? "≥" : "")\($0.0)×\($0.1)" }.joined(separator: ", ")
    }
}
