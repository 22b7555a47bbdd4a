import LoadResults
import Prometheus

/// Keeps a Prometheus registry up to date from the run's snapshots, for `--metrics-port`.
///
/// Exposition (all prefixed `xmppload_`): one counter per fixed counter (`…_total`, advanced by each
/// interval's delta), `errors_total{kind}`, gauges `sessions_online`, `sessions_connecting`,
/// `sessions_live`, and latency quantiles as gauges `latency_seconds{metric, quantile, window}` with
/// `window="interval"` (the last interval) and `window="run"` (everything so far) — a Prometheus
/// summary, computed from HDR histograms. Generator health: `generator_cpu_percent`,
/// `generator_rss_bytes`, `generator_open_fds`, `generator_loop_lag_p99_seconds`, `generator_saturated`.
final class PrometheusExporter: Sendable {
    let registry = PrometheusCollectorRegistry()
    static let quantiles: [(label: String, percentile: Double)] = [("0.5", 50), ("0.9", 90), ("0.99", 99), ("0.999", 99.9), ("1", 100)]

    func update(interval: IntervalSnapshot, cumulative: IntervalSnapshot) {
        for counter in Counter.allCases {
            let value = interval.counter(counter)
            let prometheusCounter = registry.makeCounter(name: "xmppload_\(counter.name)_total", help: "xmppload \(counter.name.replacingOccurrences(of: "_", with: " "))")
            if value > 0 { prometheusCounter.increment(by: Int64(clamping: value)) }
        }
        for (kind, count) in interval.errors {
            registry.makeCounter(name: "xmppload_errors_total", labels: [("kind", kind)], help: "Typed errors by kind").increment(by: Int64(clamping: count))
        }
        for name in ["sessions_online", "sessions_connecting", "sessions_live"] {
            registry.makeGauge(name: "xmppload_\(name)", help: "Sessions (\(name.dropFirst(9)))").set(to: Double(interval.gauge(name)))
        }
        for (window, snapshot) in [("interval", interval), ("run", cumulative)] {
            for (metric, histogram) in snapshot.latency {
                for quantile in Self.quantiles {
                    let seconds = quantile.percentile == 100 ? Double(histogram.maxMicroseconds) / 1e6
                        : Double(histogram.microseconds(atPercentile: quantile.percentile)) / 1e6
                    registry.makeGauge(name: "xmppload_latency_seconds",
                                       labels: [("metric", metric), ("quantile", quantile.label), ("window", window)],
                                       help: "Latency from the intended start, from HDR histograms").set(to: seconds)
                }
                registry.makeGauge(name: "xmppload_latency_count", labels: [("metric", metric), ("window", window)],
                                   help: "Latency samples").set(to: Double(histogram.count))
            }
        }
        if let health = interval.health {
            registry.makeGauge(name: "xmppload_generator_cpu_percent", help: "Generator CPU, % of one core").set(to: health.cpuPercent)
            registry.makeGauge(name: "xmppload_generator_rss_bytes", help: "Generator resident memory").set(to: Double(health.rssBytes))
            registry.makeGauge(name: "xmppload_generator_open_fds", help: "Generator open file descriptors").set(to: Double(health.openFileDescriptors))
            registry.makeGauge(name: "xmppload_generator_loop_lag_p99_seconds", help: "Event-loop lag p99").set(to: health.loopLagP99Milliseconds / 1000)
            registry.makeGauge(name: "xmppload_generator_saturated", help: "1 when the generator saturated in the last interval").set(to: health.saturated ? 1.0 : 0.0)
        }
    }
}
