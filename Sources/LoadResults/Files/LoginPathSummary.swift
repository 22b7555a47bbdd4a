/// One login path's figures in `summary.json`'s `login_paths` (classic, sasl2, sasl2-bind2, fast,
/// resumed): how many logins took it (and how many of them were reconnects), their round trips, and
/// their latency — so "what does FAST save on this server under load" is one run.
///
/// Recorded by the session (`SessionCore`'s `LoginPathMetrics`) as a latency metric per path
/// (`login.path.<path>`, in `latency_ms` like any other, so `compare`, `ab`, thresholds and
/// Prometheus see it) and registered counters (`metricNames`): the round trips summed, their
/// distribution (1 … `maxRoundTrips`, the last bucket holding that many or more) and the reconnects.
/// Built from a run's total snapshot (`paths(in:)`), so merged generators (`report DIR…`) add up.
/// Round trips are request/answer exchanges from the TCP connection to logged in (each stream
/// header, `<starttls/>`, the TLS handshake, each SASL message the server answers, each iq,
/// `<resume/>`); milliseconds as in `latency_ms` (corrected from the login's intended start) and
/// `service_latency_ms` (from the connect).
public struct LoginPathSummary: Codable, Sendable, Equatable {
    /// Logins that took this path.
    public var count: UInt64
    /// Of `count`, the logins of a reconnect (after a drop or a churn).
    public var reconnects: UInt64
    /// Round trips per login.
    public var roundTrips: RoundTrips
    /// Login latency from the intended start (as `latency_ms.login`).
    public var latencyMilliseconds: RunSummary.Percentiles
    /// Login latency from the TCP connect (as `service_latency_ms.login`).
    public var serviceLatencyMilliseconds: RunSummary.Percentiles?

    /// Round trips per login: the mean and how many logins took each number (keys "1" … "16";
    /// "16" counts 16 or more).
    public struct RoundTrips: Codable, Sendable, Equatable {
        public var mean: Double
        public var distribution: [String: UInt64]

        public init(mean: Double, distribution: [String: UInt64]) {
            self.mean = mean
            self.distribution = distribution
        }
    }

    enum CodingKeys: String, CodingKey {
        case count, reconnects
        case roundTrips = "round_trips"
        case latencyMilliseconds = "latency_ms"
        case serviceLatencyMilliseconds = "service_latency_ms"
    }

    public init(
        count: UInt64, reconnects: UInt64, roundTrips: RoundTrips, latencyMilliseconds: RunSummary.Percentiles,
        serviceLatencyMilliseconds: RunSummary.Percentiles?
    ) {
        self.count = count
        self.reconnects = reconnects
        self.roundTrips = roundTrips
        self.latencyMilliseconds = latencyMilliseconds
        self.serviceLatencyMilliseconds = serviceLatencyMilliseconds
    }

    /// The largest round-trip count kept apart in the distribution (its bucket also holds more).
    public static let maxRoundTrips = 16

    /// The names under which a path (`classic`, `sasl2-bind2`, …) is recorded: one place, read by
    /// the session that records and by `paths(in:)`.
    public struct MetricNames: Sendable, Equatable {
        /// The latency metric, `login.path.<path>`.
        public let latency: String
        /// The round trips summed over the path's logins, `login_path_<key>_round_trips` (`key`: the
        /// path with `_` for `-`, as Prometheus names need).
        public let roundTrips: String
        /// Logins with `n` round trips, `login_path_<key>_round_trips_<n>` for n in 1 … `maxRoundTrips`.
        public let roundTripBuckets: [String]
        /// The path's logins that were reconnects, `login_path_<key>_reconnects`.
        public let reconnects: String

        public init(path: String) {
            let key = "login_path_" + path.replacingOccurrences(of: "-", with: "_")
            latency = LoginPathSummary.metricPrefix + path
            roundTrips = key + "_round_trips"
            roundTripBuckets = (1...LoginPathSummary.maxRoundTrips).map { "\(key)_round_trips_\($0)" }
            reconnects = key + "_reconnects"
        }
    }

    /// The prefix of the per-path latency metrics.
    public static let metricPrefix = "login.path."

    /// Every path a snapshot has logins of (a `login.path.<path>` latency), by name; nil when none
    /// (a run before modern logins were measured, or one that logged nobody in).
    public static func paths(in total: IntervalSnapshot) -> [String: LoginPathSummary]? {
        var paths: [String: LoginPathSummary] = [:]
        for (metric, histogram) in total.latency where metric.hasPrefix(metricPrefix) && histogram.count > 0 {
            let path = String(metric.dropFirst(metricPrefix.count))
            let names = MetricNames(path: path)
            var distribution: [String: UInt64] = [:]
            for (index, name) in names.roundTripBuckets.enumerated() {
                let value = total.counters[name] ?? 0
                if value > 0 { distribution[String(index + 1)] = value }
            }
            let sum = total.counters[names.roundTrips] ?? 0
            paths[path] = LoginPathSummary(
                count: histogram.count, reconnects: total.counters[names.reconnects] ?? 0,
                roundTrips: RoundTrips(mean: Double(sum) / Double(histogram.count), distribution: distribution),
                latencyMilliseconds: RunSummary.Percentiles(histogram),
                serviceLatencyMilliseconds: total.serviceLatency[metric].map(RunSummary.Percentiles.init))
        }
        return paths.isEmpty ? nil : paths
    }

    /// The order paths are shown in: the usual first (classic, sasl2, sasl2-bind2, fast, resumed),
    /// any other after them by name.
    public static func ordered(_ paths: [String: LoginPathSummary]) -> [(path: String, summary: LoginPathSummary)] {
        let known = ["classic", "sasl2", "sasl2-bind2", "fast", "resumed"]
        return paths.sorted { lhs, rhs in
            let l = known.firstIndex(of: lhs.key) ?? known.count
            let r = known.firstIndex(of: rhs.key) ?? known.count
            return l != r ? l < r : lhs.key < rhs.key
        }.map { ($0.key, $0.value) }
    }
}
