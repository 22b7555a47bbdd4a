import LoadResults
import Testing

@testable import LoadEngine

/// The exposition's names, kinds, help texts and labels are what dashboards query: they must not
/// change. The expected lines below are those the exporter wrote before the names became a table.
@Suite struct PrometheusExpositionTests {
    /// `withNodes`: as a run with two endpoints (per-node series) and a monitored server process and
    /// endpoint (`--monitor`); without, as a single-server run with no monitor.
    static func exposition(withNodes: Bool = false) -> String {
        var interval = IntervalSnapshot(start: 0, end: 5)
        if withNodes { interval.nodes = NodeExpositionTests.twoNodes() }
        for counter in Counter.allCases { interval.counters[counter.name] = 1 }
        interval.counters[Counter.accountsExisted.name] = 25
        interval.errors["sasl-not-authorized"] = 3
        for (index, gauge) in SessionGauge.allCases.enumerated() { interval.gauges[gauge.name] = Int64(10 + index) }
        var login = LatencyHistogram()
        for ms in 1...100 { login.record(nanoseconds: UInt64(ms) * 1_000_000) }
        interval.latency["login"] = login
        var health = GeneratorHealth(
            cpuPercent: 12.5, cpuSeconds: 0.625, rssBytes: 1_048_576, openFileDescriptors: 42,
            loopLagP99Milliseconds: 3, loopLagMaxMilliseconds: 4, cores: 2)
        health.saturated = true
        interval.health = health
        let exporter = PrometheusExporter()
        exporter.update(interval: interval, cumulative: interval)
        if withNodes { exporter.updateServer(monitorInterval) }
        return String(decoding: exporter.registry.emitToBuffer(), as: UTF8.self)
    }

    /// A monitored Prosody process and an endpoint that did not answer.
    static let monitorInterval = MonitorInterval(
        start: 0, end: 5,
        sources: [
            "prosody": .process(
                ProcessSample(
                    name: "lua5.4", pids: [42], seconds: 5, cpuPercent: 97.5, userPercent: 80, systemPercent: 17.5, usableCores: 1,
                    busiestThreadPercent: 97.5, runQueueWaitPercent: 1.5, rssBytes: 118_489_088, threads: 1, openFDs: 2013,
                    voluntarySwitchesPerSecond: 100, involuntarySwitchesPerSecond: 10)),
            "node": .gap(MonitorGap(.timeout, "no complete response within 2 s")),
        ])

    /// The server's series: one per process source, and `server_up` 0 for a gap (never zeros for its values).
    @Test func theMonitoredServerIsExposedPerSourceAndAGapIsUpZero() {
        let lines = Set(Self.exposition(withNodes: true).split(separator: "\n").map(String.init))
        for line in [
            "xmppload_server_cpu_percent{source=\"prosody\"} 97.5", "xmppload_server_rss_bytes{source=\"prosody\"} 118489088.0",
            "xmppload_server_open_fds{source=\"prosody\"} 2013.0", "xmppload_server_run_queue_wait_percent{source=\"prosody\"} 1.5",
            "xmppload_server_up{source=\"prosody\"} 1.0", "xmppload_server_up{source=\"node\"} 0.0",
        ] {
            #expect(lines.contains(line), "\(lines.filter { $0.hasPrefix("xmppload_server") }.sorted())")
        }
        #expect(!lines.contains { $0.hasPrefix("xmppload_server_cpu_percent{source=\"node\"}") })
    }

    static let expectedHeaders: Set<String> = {
        var lines: Set<String> = []
        func add(_ name: String, _ kind: String, _ help: String) {
            lines.insert("# TYPE \(name) \(kind)")
            lines.insert("# HELP \(name) \(help)")
        }
        for counter in Counter.allCases {
            add("xmppload_\(counter.name)_total", "counter", "xmppload \(counter.name.replacingOccurrences(of: "_", with: " "))")
        }
        add("xmppload_errors_total", "counter", "Typed errors by kind")
        add("xmppload_sessions_online", "gauge", "Sessions (online)")
        add("xmppload_sessions_connecting", "gauge", "Sessions (connecting)")
        add("xmppload_sessions_live", "gauge", "Sessions (live)")
        add("xmppload_latency_seconds", "gauge", "Latency from the intended start, from HDR histograms")
        add("xmppload_latency_count", "gauge", "Latency samples")
        add("xmppload_generator_cpu_percent", "gauge", "Generator CPU, % of one core")
        add("xmppload_generator_rss_bytes", "gauge", "Generator resident memory")
        add("xmppload_generator_open_fds", "gauge", "Generator open file descriptors")
        add("xmppload_generator_loop_lag_p99_seconds", "gauge", "Event-loop lag p99")
        add("xmppload_generator_saturated", "gauge", "1 when the generator saturated in the last interval")
        return lines
    }()

    @Test func namesKindsAndHelpAreUnchanged() {
        let headers = Set(Self.exposition().split(separator: "\n").map(String.init).filter { $0.hasPrefix("# ") })
        #expect(headers == Self.expectedHeaders)
    }

    /// Values as the registry prints them (gauges are Doubles; latencies are HDR bucket values of
    /// 1…100 ms: p50 50.015 ms, max 100.031 ms).
    @Test(arguments: [
        "xmppload_sessions_started_total 1",
        "xmppload_accounts_existed_total 25",
        "xmppload_errors_total{kind=\"sasl-not-authorized\"} 3",
        "xmppload_sessions_online 10.0",
        "xmppload_sessions_connecting 11.0",
        "xmppload_sessions_live 12.0",
        "xmppload_latency_seconds{metric=\"login\",quantile=\"0.5\",window=\"interval\"} 0.050015",
        "xmppload_latency_seconds{metric=\"login\",quantile=\"1\",window=\"run\"} 0.100031",
        "xmppload_latency_count{metric=\"login\",window=\"run\"} 100.0",
        "xmppload_generator_cpu_percent 12.5",
        "xmppload_generator_rss_bytes 1048576.0",
        "xmppload_generator_open_fds 42.0",
        "xmppload_generator_loop_lag_p99_seconds 0.003",
        "xmppload_generator_saturated 1.0",
    ])
    func seriesAreExposed(line: String) {
        let lines = Self.exposition().split(separator: "\n")
        #expect(lines.contains { $0 == line }, "\(lines.filter { $0.hasPrefix(line.prefix(24)) })")
    }

    /// The table and the exposition agree: every metric of the table is exposed, with its labels.
    @Test func tableMatchesTheExposition() {
        let exposition = Self.exposition(withNodes: true)
        for metric in PrometheusMetric.allCases {
            #expect(exposition.contains("# TYPE \(metric.name) \(metric.isCounter ? "counter" : "gauge")"))
            if !metric.labelNames.isEmpty {
                #expect(exposition.contains("\(metric.name){\(metric.labelNames[0])="), "\(metric.name)")
            }
        }
        #expect(Set(PrometheusMetric.allCases.map(\.name)).count == PrometheusMetric.allCases.count)
    }

    /// Zero is a value: before the first interval, every counter the Grafana dashboard queries is
    /// served at 0 (a clean run's error panel shows 0, not "No data").
    @Test func theFirstScrapeServesEveryCounterAtZero() {
        let exposition = String(decoding: PrometheusExporter().registry.emitToBuffer(), as: UTF8.self)
        let lines = Set(exposition.split(separator: "\n").map(String.init))
        for counter in Counter.allCases {
            #expect(lines.contains("xmppload_\(counter.name)_total 0"), "\(counter.name)")
        }
        #expect(lines.contains { $0.hasPrefix("xmppload_errors_total") && $0.hasSuffix(" 0") }, "\(exposition)")
        #expect(lines.contains("xmppload_sessions_online 0.0") || lines.contains("xmppload_sessions_online 0"), "\(exposition)")
    }
}
