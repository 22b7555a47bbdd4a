/// The HTML report's login-path table (summary.json's `login_paths`).
extension HTMLReport {
    /// One row per login path logins took: logins, reconnects, round trips (mean and per number),
    /// latency percentiles from the intended start and the service p99. Empty when no login was
    /// measured by path.
    static func loginPathsSection(_ paths: [String: LoginPathSummary]?) -> String {
        guard let paths, !paths.isEmpty else { return "" }
        let f = TextReport.formatMs
        var html =
            "<h2>Login paths</h2><table><tr><th>path</th><th>logins</th><th>reconnects</th><th>round trips (mean)</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>service p99</th><th>round trips per login</th></tr>"
        for (path, figures) in LoginPathSummary.ordered(paths) {
            let p = figures.latencyMilliseconds
            html += "<tr><td>\(esc(path))</td><td>\(figures.count)</td><td>\(figures.reconnects)</td>"
            html += "<td>\(String(format: "%.2f", figures.roundTrips.mean))</td>"
            html += [p.p50, p.p90, p.p99, p.max].map { "<td>\(f($0))</td>" }.joined()
            html += "<td>\(figures.serviceLatencyMilliseconds.map { f($0.p99) } ?? "–")</td>"
            html += "<td>\(esc(TextReport.roundTripDistribution(figures.roundTrips)))</td></tr>"
        }
        return html + "</table>"
    }
}
