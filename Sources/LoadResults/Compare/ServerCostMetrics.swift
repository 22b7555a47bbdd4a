/// `compare`'s and `ab`'s rows for a monitored server's costs (`summary.json`'s `server_costs`): CPU
/// per login, CPU per message and memory per online session, judged like the client metrics — lower
/// is better, relative changes, tolerance `server` (10 %) — so "which build is lighter" is answered
/// beside "which is faster".
///
/// Keys: `server.cpu_per_login`, `server.cpu_per_message`, `server.rss_per_session` when a run has
/// one process source (so `ab`'s two servers, watched under different labels, still compare), else
/// `server.LABEL.…` per source. A cost is one value per run (a fit over the run's intervals), so
/// it is resampled over runs (≥ 3 per side) or paired over `ab`'s rounds; with fewer runs its
/// values and change are shown without a verdict, like every other row then.
public enum ServerCostMetrics {
    public static let cpuPerLogin = "cpu_per_login"
    public static let cpuPerMessage = "cpu_per_message"
    public static let memoryPerSession = "rss_per_session"

    /// A run's costs by compare key (milliseconds of CPU, bytes of memory).
    public static func values(_ costs: [ServerCosts]) -> [String: Double] {
        var values: [String: Double] = [:]
        for cost in costs {
            let prefix = costs.count == 1 ? "server." : "server.\(cost.source)."
            if let value = cost.cpuPerLoginMilliseconds { values[prefix + cpuPerLogin] = value }
            if let value = cost.cpuPerMessageMilliseconds { values[prefix + cpuPerMessage] = value }
            if let value = cost.rssPerSessionBytes { values[prefix + memoryPerSession] = value }
        }
        return values
    }

    /// The metric of a compare key.
    static func metric(_ key: String) -> CompareMetric {
        CompareMetric(key: key, kind: .cost, higherIsWorse: true)
    }

    /// One row per cost either side measured, in key order. `paired`: round r is `baseline[r]` and
    /// `candidate[r]`; else, `perRun` units are resampled as runs (widened for their number).
    static func rows(
        baseline: [[String: Double]], candidate: [[String: Double]], paired: Bool, tolerances: Tolerances, bootstrap: Bootstrap
    ) -> [Comparison.Row] {
        let keys = Set((baseline + candidate).flatMap(\.keys)).sorted()
        return keys.map { key in
            let metric = metric(key)
            let estimate: Bootstrap.Estimate?
            if paired {
                let pairs = zip(baseline, candidate).map { ($0[key], $1[key]) }
                let measured = pairs.filter { $0.0 != nil && $0.1 != nil }.count
                estimate = bootstrap.paired(baseline: pairs.map(\.0), candidate: pairs.map(\.1), relative: true).map {
                    Bootstrap.expanded($0, units: measured, bounds: Comparison.bounds(metric))
                }
            } else {
                let base = baseline.compactMap { $0[key] }.map { (numerator: $0, denominator: 1.0) }
                let cand = candidate.compactMap { $0[key] }.map { (numerator: $0, denominator: 1.0) }
                estimate = bootstrap.ratio(baseline: base, candidate: cand, scale: 1, relative: true).map {
                    Bootstrap.expanded($0, units: max(1, min(base.count, cand.count)), bounds: Comparison.bounds(metric))
                }
            }
            return Comparison.row(metric, estimate, tolerances: tolerances)
        }
    }
}
