// The metrics a login records by path (classic, SASL2, Bind2, FAST, resumed) and the FAST token counters.
import LoadResults
import XMPPCore

/// What a finished login records about the way it went, registered once per run: per login path
/// (`LoginPath.allCases`) a latency metric `login.path.<path>` and counters for its round trips
/// (summed, and per number of round trips) and reconnects (names: `LoginPathSummary.MetricNames`,
/// which summary.json's `login_paths` reads back); and the FAST token counters — tokens the server
/// issued (`fast_tokens_issued`, rotations included) and tokens it refused, each followed by the
/// full login on the same stream (`fast_token_fallbacks`, said as the notice `fast-token-rejected`).
///
/// Costs nothing per session (the ids live in the run's `FixedMetrics`); a path's histograms exist
/// only once a login took it.
public struct LoginPathMetrics: Sendable {
    /// Indexed like `LoginPath.allCases`.
    let latency: [MetricID]
    let roundTrips: [CounterID]
    /// `[path][n − 1]` for n round trips (the last bucket: that many or more).
    let roundTripBuckets: [[CounterID]]
    let reconnects: [CounterID]
    let fastTokensIssued: CounterID
    let fastTokenFallbacks: CounterID

    public init(registry: inout MetricRegistry) {
        var latency: [MetricID] = []
        var roundTrips: [CounterID] = []
        var buckets: [[CounterID]] = []
        var reconnects: [CounterID] = []
        for path in LoginPath.allCases {
            let names = LoginPathSummary.MetricNames(path: path.rawValue)
            latency.append(registry.register(names.latency))
            roundTrips.append(registry.registerCounter(names.roundTrips))
            buckets.append(names.roundTripBuckets.map { registry.registerCounter($0) })
            reconnects.append(registry.registerCounter(names.reconnects))
        }
        self.latency = latency
        self.roundTrips = roundTrips
        roundTripBuckets = buckets
        self.reconnects = reconnects
        fastTokensIssued = registry.registerCounter("fast_tokens_issued")
        fastTokenFallbacks = registry.registerCounter("fast_token_fallbacks", notice: Self.fallbackNotice)
    }

    /// What a non-zero `fast_token_fallbacks` tells a person.
    static let fallbackNotice = CounterNotice(
        kind: "fast-token-rejected",
        text: "the server refused {count} FAST token(s) (XEP-0484); each of those logins fell back to the password on the same stream")

    /// Records a finished login's path: its latency (corrected from `intended`, service from
    /// `connectStart`), round trips and, for a reconnect, one more reconnect on the path.
    func record(_ outcome: LoginOutcome, reconnected: Bool, intended: SessionInstant, connectStart: SessionInstant, _ s: inout SessionShared) {
        guard let index = LoginPath.allCases.firstIndex(of: outcome.path) else { return }
        s.recordLatency(latency[index], from: intended, serviceFrom: connectStart)
        let trips = max(outcome.roundTrips, 1)
        s.count(roundTrips[index], by: UInt64(trips))
        s.count(roundTripBuckets[index][min(trips, roundTripBuckets[index].count) - 1])
        if reconnected { s.count(reconnects[index]) }
    }
}
