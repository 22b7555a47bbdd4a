import LoadResults
import Prometheus

/// Keeps a Prometheus registry up to date from the run's snapshots, for `--metrics-port`; a run
/// output fed every interval.
///
/// Exposition (names in `PrometheusMetric`, all prefixed `xmppload_`): one counter per fixed counter
/// (`…_total`, advanced by each interval's delta), `errors_total{kind}`, gauges `sessions_online`,
/// `sessions_connecting`, `sessions_live`, and latency quantiles as gauges
/// `latency_seconds{metric, quantile, window}` with `window="interval"` (the last interval) and
/// `window="run"` (everything so far) — a Prometheus summary, computed from HDR histograms.
/// Generator health: `generator_cpu_percent`, `generator_rss_bytes`, `generator_open_fds`,
/// `generator_loop_lag_p99_seconds`, `generator_saturated`.
final class PrometheusExporter: RunOutput {
    let registry = PrometheusCollectorRegistry()
    static let quantiles: [(label: String, percentile: Double)] = [("0.5", 50), ("0.9", 90), ("0.99", 99), ("0.999", 99.9), ("1", 100)]

    func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        update(interval: interval.snapshot, cumulative: interval.cumulative)
        return nil
    }

    func runEnded(_ end: RunEnd) throws {}

    func update(interval: IntervalSnapshot, cumulative: IntervalSnapshot) {
        for counter in Counter.allCases {
            let value = interval.counter(counter)
            let prometheusCounter = registry.counter(.counter(counter))
            if value > 0 { prometheusCounter.increment(by: Int64(clamping: value)) }
        }
        for (kind, count) in interval.errors {
            registry.counter(.errors, kind).increment(by: Int64(clamping: count))
        }
        for gauge in SessionGauge.allCases {
            registry.gauge(.sessions(gauge)).set(to: Double(interval.gauge(gauge)))
        }
        for (window, snapshot) in [("interval", interval), ("run", cumulative)] {
            for (metric, histogram) in snapshot.latency {
                for quantile in Self.quantiles {
                    let seconds =
                        quantile.percentile == 100
                        ? Double(histogram.maxMicroseconds) / 1e6
                        : Double(histogram.microseconds(atPercentile: quantile.percentile)) / 1e6
                    registry.gauge(.latencySeconds, metric, quantile.label, window).set(to: seconds)
                }
                registry.gauge(.latencyCount, metric, window).set(to: Double(histogram.count))
            }
        }
        if let health = interval.health {
            registry.gauge(.generatorCPUPercent).set(to: health.cpuPercent)
            registry.gauge(.generatorRSSBytes).set(to: Double(health.rssBytes))
            registry.gauge(.generatorOpenFileDescriptors).set(to: Double(health.openFileDescriptors))
            registry.gauge(.generatorLoopLagP99Seconds).set(to: health.loopLagP99Milliseconds / 1000)
            registry.gauge(.generatorSaturated).set(to: health.saturated ? 1.0 : 0.0)
        }
    }
}
