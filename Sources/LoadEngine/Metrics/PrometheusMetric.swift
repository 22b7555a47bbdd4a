import LoadResults
import Prometheus

/// Every metric of the Prometheus exposition (`--metrics-port`): its name, help text and label
/// names, in one table. Dashboards query these names; changing one breaks them.
///
/// All names are prefixed `xmppload_`: `<counter>_total` per fixed counter, `errors_total{kind}`,
/// `sessions_online` / `sessions_connecting` / `sessions_live`, `latency_seconds{metric, quantile,
/// window}` and `latency_count{metric, window}`, and the generator's health gauges.
enum PrometheusMetric: Hashable, Sendable {
    /// `xmppload_<counter>_total`, advanced by each interval's delta.
    case counter(LoadResults.Counter)
    /// `xmppload_<name>_total` for a counter a session feature registered (`blocking_unsupported`,
    /// `mam_messages`, …), advanced by each interval's delta; it exists once the feature counted.
    case registeredCounter(String)
    /// `xmppload_errors_total{kind}`.
    case errors
    /// `xmppload_sessions_online` etc.: the collector's session gauges.
    case sessions(SessionGauge)
    /// `xmppload_latency_seconds{metric, quantile, window}`: a summary's quantiles from HDR histograms.
    case latencySeconds
    /// `xmppload_latency_count{metric, window}`.
    case latencyCount
    case generatorCPUPercent
    case generatorRSSBytes
    case generatorOpenFileDescriptors
    case generatorLoopLagP99Seconds
    case generatorSaturated
    /// `xmppload_node_login_seconds{node, quantile, window}`: login latency per server node (runs with
    /// several endpoints; one series set per endpoint).
    case nodeLoginSeconds
    /// `xmppload_node_login_count{node, window}`.
    case nodeLoginCount
    /// `xmppload_node_errors_total{node, kind}`.
    case nodeErrors
    /// `xmppload_node_message_seconds{node, receiver_node, quantile, window}`: one-to-one message
    /// latency from a sender on `node` to a receiver on `receiver_node` (endpoints² series sets at most).
    case nodeMessageSeconds
    /// `xmppload_node_message_count{node, receiver_node, window}`.
    case nodeMessageCount
    /// `xmppload_server_cpu_percent{source}`: a monitored server process's CPU over the last monitor
    /// interval, % of one core (`--monitor process:…`).
    case serverCPUPercent
    /// `xmppload_server_rss_bytes{source}`.
    case serverRSSBytes
    /// `xmppload_server_open_fds{source}`.
    case serverOpenFileDescriptors
    /// `xmppload_server_run_queue_wait_percent{source}`: time its threads waited for a CPU, % of the interval.
    case serverRunQueueWaitPercent
    /// `xmppload_server_up{source}`: 1 when the monitor's last interval had a sample, 0 on a gap.
    case serverUp

    static let namespace = "xmppload"

    /// The whole exposition, in a stable order.
    static var allCases: [PrometheusMetric] {
        LoadResults.Counter.allCases.map(PrometheusMetric.counter) + [.errors] + SessionGauge.allCases.map(PrometheusMetric.sessions)
            + [
                .latencySeconds, .latencyCount, .generatorCPUPercent, .generatorRSSBytes, .generatorOpenFileDescriptors,
                .generatorLoopLagP99Seconds, .generatorSaturated, .nodeLoginSeconds, .nodeLoginCount, .nodeErrors,
                .nodeMessageSeconds, .nodeMessageCount, .serverCPUPercent, .serverRSSBytes, .serverOpenFileDescriptors,
                .serverRunQueueWaitPercent, .serverUp,
            ]
    }

    /// Name parts: base name and unit suffix ("" for none).
    private var parts: (name: String, unit: String) {
        switch self {
        case .counter(let counter): return (counter.name, "total")
        case .registeredCounter(let name): return (name, "total")
        case .errors: return ("errors", "total")
        case .sessions(let gauge): return (gauge.name, "")
        case .latencySeconds: return ("latency", "seconds")
        case .latencyCount: return ("latency", "count")
        case .generatorCPUPercent: return ("generator_cpu", "percent")
        case .generatorRSSBytes: return ("generator_rss", "bytes")
        case .generatorOpenFileDescriptors: return ("generator_open_fds", "")
        case .generatorLoopLagP99Seconds: return ("generator_loop_lag_p99", "seconds")
        case .generatorSaturated: return ("generator_saturated", "")
        case .nodeLoginSeconds: return ("node_login", "seconds")
        case .nodeLoginCount: return ("node_login", "count")
        case .nodeErrors: return ("node_errors", "total")
        case .nodeMessageSeconds: return ("node_message", "seconds")
        case .nodeMessageCount: return ("node_message", "count")
        case .serverCPUPercent: return ("server_cpu", "percent")
        case .serverRSSBytes: return ("server_rss", "bytes")
        case .serverOpenFileDescriptors: return ("server_open_fds", "")
        case .serverRunQueueWaitPercent: return ("server_run_queue_wait", "percent")
        case .serverUp: return ("server_up", "")
        }
    }

    var help: String {
        switch self {
        case .counter(let counter): return "xmppload \(counter.name.replacingOccurrences(of: "_", with: " "))"
        case .registeredCounter(let name): return "xmppload \(name.replacingOccurrences(of: "_", with: " ")) (a feature's counter)"
        case .errors: return "Typed errors by kind"
        case .sessions(let gauge): return "Sessions (\(gauge.name.dropFirst("sessions_".count)))"
        case .latencySeconds: return "Latency from the intended start, from HDR histograms"
        case .latencyCount: return "Latency samples"
        case .generatorCPUPercent: return "Generator CPU, % of one core"
        case .generatorRSSBytes: return "Generator resident memory"
        case .generatorOpenFileDescriptors: return "Generator open file descriptors"
        case .generatorLoopLagP99Seconds: return "Event-loop lag p99"
        case .generatorSaturated: return "1 when the generator saturated in the last interval"
        case .nodeLoginSeconds: return "Login latency from the intended start per server node, from HDR histograms"
        case .nodeLoginCount: return "Logins per server node"
        case .nodeErrors: return "Typed errors of the sessions of a server node, by kind"
        case .nodeMessageSeconds: return "Message latency from send to receipt, sender's node to receiver's node"
        case .nodeMessageCount: return "Messages per sender node and receiver node"
        case .serverCPUPercent: return "A monitored server process's CPU over the last interval, % of one core"
        case .serverRSSBytes: return "A monitored server process's resident memory"
        case .serverOpenFileDescriptors: return "A monitored server process's open file descriptors"
        case .serverRunQueueWaitPercent: return "Time a monitored server process's threads waited for a CPU, % of the interval"
        case .serverUp: return "1 when the monitor sampled the source in its last interval, 0 on a gap"
        }
    }

    /// Label names, in the order their values are given.
    var labelNames: [String] {
        switch self {
        case .errors: return ["kind"]
        case .latencySeconds: return ["metric", "quantile", "window"]
        case .latencyCount: return ["metric", "window"]
        case .nodeLoginSeconds: return ["node", "quantile", "window"]
        case .nodeLoginCount: return ["node", "window"]
        case .nodeErrors: return ["node", "kind"]
        case .nodeMessageSeconds: return ["node", "receiver_node", "quantile", "window"]
        case .nodeMessageCount: return ["node", "receiver_node", "window"]
        case .serverCPUPercent, .serverRSSBytes, .serverOpenFileDescriptors, .serverRunQueueWaitPercent, .serverUp: return ["source"]
        default: return []
        }
    }

    var isCounter: Bool {
        switch self {
        case .counter, .registeredCounter, .errors, .nodeErrors: return true
        default: return false
        }
    }

    var descriptor: MetricNameDescriptor {
        MetricNameDescriptor(namespace: Self.namespace, metricName: parts.name, unitName: parts.unit, helpText: help)
    }

    /// The exposed name, e.g. `xmppload_sessions_logged_in_total`.
    var name: String { descriptor.name }
}

extension PrometheusCollectorRegistry {
    /// The counter `metric` with these label values (one per `metric.labelNames`, in order).
    func counter(_ metric: PrometheusMetric, _ labelValues: String...) -> Prometheus.Counter {
        precondition(metric.isCounter && labelValues.count == metric.labelNames.count, "\(metric.name): wrong kind or labels")
        return makeCounter(descriptor: metric.descriptor, labels: Array(zip(metric.labelNames, labelValues)))
    }

    /// The gauge `metric` with these label values (one per `metric.labelNames`, in order).
    func gauge(_ metric: PrometheusMetric, _ labelValues: String...) -> Gauge {
        precondition(!metric.isCounter && labelValues.count == metric.labelNames.count, "\(metric.name): wrong kind or labels")
        return makeGauge(descriptor: metric.descriptor, labels: Array(zip(metric.labelNames, labelValues)))
    }
}
