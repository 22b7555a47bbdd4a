import LoadResults
import Prometheus

/// Keeps a Prometheus registry up to date from the run's snapshots, for `--metrics-port`; a run
/// sink fed every interval.
///
/// Exposition (names in `PrometheusMetric`, all prefixed `xmppload_`): one counter per fixed counter
/// (`…_total`, advanced by each interval's delta), `errors_total{kind}`, gauges `sessions_online`,
/// `sessions_connecting`, `sessions_live`, and latency quantiles as gauges
/// `latency_seconds{metric, quantile, window}` with `window="interval"` (the last interval) and
/// `window="run"` (everything so far) — a Prometheus summary, computed from HDR histograms.
/// Generator health: `generator_cpu_percent`, `generator_rss_bytes`, `generator_open_fds`,
/// `generator_loop_lag_p99_seconds`, `generator_saturated`. Runs with several endpoints add per-node
/// series (`node` label, one value per endpoint): `node_login_seconds{node, quantile, window}`,
/// `node_login_count`, `node_errors_total{node, kind}` and the message matrix
/// `node_message_seconds{node, receiver_node, quantile, window}` / `node_message_count`. With
/// `--monitor`: `server_up{source}` and, for process sources, `server_cpu_percent`,
/// `server_rss_bytes`, `server_open_fds`, `server_run_queue_wait_percent` (per source label).
final class PrometheusExporter: RunSink {
    let registry = PrometheusCollectorRegistry()
    static let quantiles: [(label: String, percentile: Double)] = [("0.5", 50), ("0.9", 90), ("0.99", 99), ("0.999", 99.9), ("1", 100)]

    /// Every counter the dashboard queries exists from the first scrape, at 0, so a clean run's
    /// panels show 0 rather than "No data": each fixed counter, `errors_total` as one series with an
    /// empty `kind` (Prometheus treats it as no label; the kinds appear beside it as they occur) and
    /// the session gauges.
    init() {
        for counter in Counter.allCases { _ = registry.counter(.counter(counter)) }
        _ = registry.counter(.errors, "")
        for gauge in SessionGauge.allCases { registry.gauge(.sessions(gauge)).set(to: 0) }
    }

    func intervalEnded(_ interval: IntervalEnd) {
        update(interval: interval.snapshot, cumulative: interval.cumulative)
        for monitored in interval.monitor { updateServer(monitored) }
    }

    func update(interval: IntervalSnapshot, cumulative: IntervalSnapshot) {
        for counter in Counter.allCases {
            let value = interval.counter(counter)
            let prometheusCounter = registry.counter(.counter(counter))
            if value > 0 { prometheusCounter.increment(by: Int64(clamping: value)) }
        }
        for (name, value) in interval.counters where value > 0 && Counter(name: name) == nil {
            registry.counter(.registeredCounter(name)).increment(by: Int64(clamping: value))
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
        updateNodes(interval: interval, cumulative: cumulative)
        if let health = interval.health {
            registry.gauge(.generatorCPUPercent).set(to: health.cpuPercent)
            registry.gauge(.generatorRSSBytes).set(to: Double(health.rssBytes))
            registry.gauge(.generatorOpenFileDescriptors).set(to: Double(health.openFileDescriptors))
            registry.gauge(.generatorLoopLagP99Seconds).set(to: health.loopLagP99Milliseconds / 1000)
            registry.gauge(.generatorSaturated).set(to: health.saturated ? 1.0 : 0.0)
        }
    }
}

extension PrometheusExporter {
    /// The monitored server's series (`--monitor`), per source label: `server_up` for every source
    /// (0 on a gap; a gap leaves the other series at their last value rather than at zero), the
    /// process series for process sources.
    func updateServer(_ interval: MonitorInterval) {
        for (label, reading) in interval.sources {
            registry.gauge(.serverUp, label).set(to: reading.gap == nil ? 1.0 : 0.0)
            guard let sample = reading.process else { continue }
            registry.gauge(.serverCPUPercent, label).set(to: sample.cpuPercent)
            registry.gauge(.serverRSSBytes, label).set(to: Double(sample.rssBytes))
            if let fds = sample.openFDs { registry.gauge(.serverOpenFileDescriptors, label).set(to: Double(fds)) }
            if let wait = sample.runQueueWaitPercent { registry.gauge(.serverRunQueueWaitPercent, label).set(to: wait) }
        }
    }

    /// The per-node series: nothing for a single-server run (no `nodes` in the snapshots).
    func updateNodes(interval: IntervalSnapshot, cumulative: IntervalSnapshot) {
        for (node, figures) in interval.nodes?.nodes ?? [:] {
            for (kind, count) in figures.errors { registry.counter(.nodeErrors, node, kind).increment(by: Int64(clamping: count)) }
        }
        for (window, snapshot) in [("interval", interval), ("run", cumulative)] {
            guard let nodes = snapshot.nodes else { continue }
            for (node, figures) in nodes.nodes {
                guard let login = figures.latency["login"] else { continue }
                for quantile in Self.quantiles {
                    registry.gauge(.nodeLoginSeconds, node, quantile.label, window).set(to: Self.seconds(login, quantile.percentile))
                }
                registry.gauge(.nodeLoginCount, node, window).set(to: Double(login.count))
            }
            for (sender, row) in nodes.messages {
                for (receiver, histogram) in row {
                    for quantile in Self.quantiles {
                        registry.gauge(.nodeMessageSeconds, sender, receiver, quantile.label, window)
                            .set(to: Self.seconds(histogram, quantile.percentile))
                    }
                    registry.gauge(.nodeMessageCount, sender, receiver, window).set(to: Double(histogram.count))
                }
            }
        }
    }

    /// A quantile in seconds (100: the maximum).
    static func seconds(_ histogram: LatencyHistogram, _ percentile: Double) -> Double {
        percentile == 100
            ? Double(histogram.maxMicroseconds) / 1e6 : Double(histogram.microseconds(atPercentile: percentile)) / 1e6
    }
}
