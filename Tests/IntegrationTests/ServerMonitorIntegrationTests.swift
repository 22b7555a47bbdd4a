import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import NIOCore
import Testing
import XMPPCore

#if canImport(Glibc)
import Glibc
#endif

/// The monitor against real sources: Debian's `prometheus-node-exporter` (started by the test on a
/// free loopback port, stopped by PID), and a private Prosody 0.12 (scripts/local-server
/// `--openmetrics`) watched as a process and through `mod_http_openmetrics` while a real load runs
/// against it; then the server's costs and who limited the run, from the same intervals.
@Suite(.serialized) struct ServerMonitorIntegrationTests {
    static let nodeExporter = "/usr/bin/prometheus-node-exporter"

    /// `KEY=value` lines of the server's `server.env`.
    static func environment(of server: LocalServer) throws -> [String: String] {
        LocalServer.keyValues(try String(contentsOfFile: server.directory + "/server.env", encoding: .utf8))
    }

    /// Samples `sources` on a `seconds`-second grid while `body` runs; the intervals, in order.
    static func monitored<T>(
        _ sources: [MonitorSource], every seconds: Int64, _ body: () async throws -> T
    ) async throws -> (T, [MonitorInterval], [String]) {
        let monitor = ServerMonitor(sources: sources, interval: .seconds(seconds))
        monitor.start(origin: .now())
        var intervals: [MonitorInterval] = []
        let result: T
        do {
            result = try await body()
        } catch {
            _ = await monitor.finish()
            throw error
        }
        intervals += monitor.take()
        intervals += await monitor.finish()
        return (result, intervals, monitor.takeWarnings())
    }

    @Test(.timeLimit(.minutes(2)))
    func nodeExporterGivesHostCPUMemoryAndTCPCountersPerInterval() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.nodeExporter) else {
            Issue.record("\(Self.nodeExporter) is missing: run scripts/install-deps")
            return
        }
        let port = try VerdictCommandTests.unusedPort()
        let exporter = try ChildProcess.spawn(Self.nodeExporter, ["--web.listen-address=127.0.0.1:\(port)"])
        defer {
            kill(exporter.pid, SIGTERM)
            _ = exporter.wait(timeout: 10)
            exporter.removeLog()
        }
        let since = Date()
        while (try? PrometheusScrapeTests.get(port: port, path: "/metrics").0) != 200 {
            guard Date().timeIntervalSince(since) < 30 else {
                Issue.record("node_exporter did not answer:\n\(exporter.output)")
                return
            }
            usleep(100_000)
        }
        let sources = [
            try MonitorSource.parse("node_exporter=prometheus:http://127.0.0.1:\(port)/metrics"),
            try MonitorSource.parse(
                "idle=prometheus:http://127.0.0.1:\(port)/metrics?keep=node_cpu_seconds_total{mode=\"idle\"},node_netstat_TcpExt_Listen*"),
        ]
        let (_, intervals, warnings) = try await Self.monitored(sources, every: 1) { try await Task.sleep(for: .milliseconds(3_300)) }
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(intervals.count == 4)
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        for interval in intervals.dropLast() {
            let node = try #require(interval.sources["node_exporter"]?.series, "\(String(describing: interval.sources["node_exporter"]))")
            // Host CPU by mode, summed over cores: all modes together are the cores × the seconds.
            let modes = node.increases.filter { $0.key.hasPrefix("sum by (mode) (node_cpu_seconds_total){mode=") }
            #expect(Set(modes.keys.map { String($0.split(separator: "\"")[1]) }).isSuperset(of: ["idle", "user", "system"]))
            let seconds = try #require(node.seconds)
            let busy = modes.values.reduce(0, +)
            #expect(abs(busy - cores * seconds) < 0.25 * cores * seconds, "\(busy) CPU seconds in \(seconds) s on \(cores) cores")
            #expect(node.gauges["node_load1"] != nil && (node.gauges["node_memory_MemAvailable_bytes"] ?? 0) > 0)
            #expect(node.increases["node_netstat_TcpExt_ListenOverflows"] != nil && node.increases["node_netstat_Tcp_PassiveOpens"] != nil)
            #expect(node.gauges["node_netstat_Tcp_CurrEstab"] != nil)
            #expect(node.bodyBytes > 10_000 && node.samplesSeen > 500 && node.dropped == nil)
            // keep= chooses: one idle series per core and the listen-queue counters, nothing else.
            let idle = try #require(interval.sources["idle"]?.series)
            #expect(idle.increases.keys.filter { $0.hasPrefix("node_cpu_seconds_total{cpu=") }.count == Int(cores))
            #expect(
                Set(idle.increases.keys.filter { $0.hasPrefix("node_netstat") }) == [
                    "node_netstat_TcpExt_ListenDrops", "node_netstat_TcpExt_ListenOverflows",
                ])
            #expect(idle.gauges.isEmpty)
        }
    }

    /// A chat load against Prosody with its process and its OpenMetrics endpoint monitored.
    static func chatRun(
        _ server: LocalServer, sessions: Int, ramp: Int64, duration: Int64, tls: TLSMode, out: String
    ) async throws -> (summary: RunSummary, load: [LoadPoint], intervals: [MonitorInterval], warnings: [String], sources: [MonitorSource]) {
        let environment = try Self.environment(of: server)
        let pid = try #require(environment["XMPPLOAD_PID"])
        let openMetrics = try #require(environment["XMPPLOAD_OPENMETRICS_URL"].flatMap { $0.isEmpty ? nil : $0 })
        let sources = [
            try MonitorSource.parse("prosody=process:\(pid)"),
            try MonitorSource.parse("openmetrics=prometheus:\(openMetrics)?keep=prosody_mod_c2s__connections,prosody_stats_collection_seconds_count"),
        ]
        let definition = try ProfileLoader.load(yaml: EngineIntegrationTests.chatProfile, file: "monitor-chat.yaml")
        var configuration = RunConfiguration(
            host: server.host, port: server.port, domain: server.domain, accounts: 1...sessions, password: server.password, tls: tls,
            insecure: true, mechanism: .scramSHA1, outputDirectory: out, interval: .seconds(2))
        // The run watches the server itself (`--monitor`): intervals.jsonl, summary.json and its verdict.
        configuration.monitors = sources
        let plan = LoadPlan.closed(sessions: sessions, ramp: .seconds(ramp), duration: .seconds(duration))
        let warnings = NoticeRecorder()
        let summary = try await LoadRun(configuration: configuration, definition: definition, plan: plan).run(sinks: [warnings]).summary
        let load = try ResultsDirectory(path: out).readIntervals().map { LoadPoint($0, metric: "login") }
        let intervals = MonitorInterval.lines(in: try Data(contentsOf: URL(fileURLWithPath: out + "/intervals.jsonl")))
        return (summary, load, intervals, warnings.warnings, sources)
    }

    @Test(.timeLimit(.minutes(3)))
    func aLightRunAgainstProsodyHasItsCPUAndMemoryEveryIntervalAndItsCostsAndIsNotServerBound() async throws {
        try await LocalServer.with(accounts: 400, options: ["--openmetrics"]) { server in
            let out = EngineIntegrationTests.temporaryDirectory("monitor-light")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let run = try await Self.chatRun(server, sessions: 400, ramp: 10, duration: 18, tls: .none, out: out)
            #expect(run.warnings.isEmpty, "\(run.warnings)")
            // Every interval of the run has the server's CPU and memory, and its own connection count.
            #expect(run.intervals.count >= 9)
            for interval in run.intervals {
                let prosody = try #require(interval.sources["prosody"]?.process, "\(interval)")
                #expect(prosody.threads == 1 && prosody.usableCores == 1 && prosody.rssBytes > 1_000_000)
                #expect(prosody.openFDs != nil)
                let metrics = try #require(interval.sources["openmetrics"]?.series, "\(interval)")
                #expect(metrics.scrapeMilliseconds < 2000)
            }
            let peak = run.intervals.compactMap { $0.sources["openmetrics"]?.series?.gauges.values.reduce(0, +) }.max() ?? 0
            #expect(peak >= Double(run.summary.sessions.loggedIn) * 0.9, "c2s connections \(peak) for \(run.summary.sessions.loggedIn) online")
            let fds = run.intervals.compactMap { $0.sources["prosody"]?.process?.openFDs }.max() ?? 0
            #expect(fds >= Int(run.summary.sessions.loggedIn), "prosody's descriptors \(fds)")

            var accumulator = MonitorAccumulator(sources: run.sources)
            for interval in run.intervals { accumulator.add(interval) }
            let summary = accumulator.summary
            let figures = try #require(summary.sources["prosody"]?.process)
            #expect(figures.cpuSeconds > 0 && figures.cpuMaxPercent > figures.cpuMeanPercent && figures.rssMaxBytes >= figures.rssStartBytes)
            #expect(summary.sources["prosody"]?.gaps == 0 && summary.sources["openmetrics"]?.gaps == 0)

            let aligned = MonitorAlignment.align(run.intervals, to: run.load)
            #expect(aligned.filter { $0 != nil }.count >= run.load.count - 1)
            let costs = try #require(
                ServerCosts.estimate(source: "prosody", load: run.load, readings: MonitorAlignment.readings(of: "prosody", in: aligned)))
            print("monitor: prosody costs (plain TCP, SCRAM-SHA-1, chat): \(costs)")
            // Loose bounds, not a benchmark: Prosody spends milliseconds per login and tens of KiB per session.
            if let perLogin = costs.cpuPerLoginMilliseconds { #expect(perLogin > 0.2 && perLogin < 200) }
            if let perSession = costs.rssPerSessionBytes { #expect(perSession > 1_000 && perSession < 1_000_000) }

            let attribution = try #require(run.summary.limit, "the run judged who limited it")
            #expect(run.summary.limitedBy == attribution.limitedBy.rawValue)
            #expect(run.summary.serverCosts?.first?.source == "prosody")
            #expect(run.summary.monitors?.sources["prosody"]?.gaps == 0)
            print("monitor: light run: \(attribution.limitedBy.rawValue): \(attribution.evidence)")
            #expect(attribution.limitedBy != .server, "\(attribution.evidence)")
            #expect(attribution.evidence.contains("prosody"))
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func aRunThatSaturatesProsodyIsServerBoundWithItsEvidence() async throws {
        try await LocalServer.with(accounts: 2000, options: ["--openmetrics"]) { server in
            let out = EngineIntegrationTests.temporaryDirectory("monitor-saturated")
            defer { try? FileManager.default.removeItem(atPath: out) }
            // The demo's kind of load: 2,000 chat users over STARTTLS arriving at 200 logins/s, more
            // than one Prosody core logs in (~130/s plain TCP here, fewer with TLS).
            let run = try await Self.chatRun(server, sessions: 2000, ramp: 10, duration: 24, tls: .startTLS, out: out)
            let aligned = MonitorAlignment.align(run.intervals, to: run.load)
            let attribution = try #require(run.summary.limit, "the run judged who limited it")
            let top = run.intervals.compactMap { $0.sources["prosody"]?.process?.cpuPercent }.max() ?? 0
            print("monitor: saturating run: \(attribution.limitedBy.rawValue): \(attribution.evidence) (prosody peak \(top) %)")
            // On a machine this busy the generator may give out first (its loop lag of the logins'
            // order, or its CPU at its limit); then it must say so, and otherwise the server is named.
            if attribution.limitedBy == .generator {
                #expect(run.summary.generator.saturated, "\(attribution.evidence)")
            } else {
                #expect(attribution.limitedBy == .server, "\(attribution.evidence)")
                #expect(attribution.evidence.contains("server-bound — prosody at "))
            }
            if let costs = ServerCosts.estimate(source: "prosody", load: run.load, readings: MonitorAlignment.readings(of: "prosody", in: aligned)) {
                print("monitor: prosody costs (STARTTLS, SCRAM-SHA-1, chat, saturated): \(costs)")
            }
        }
    }
}

/// Keeps the monitor warnings a run tells its sinks.
final class NoticeRecorder: RunSink, @unchecked Sendable {
    // @unchecked: the run calls a sink from its one orchestrating task, one call at a time; the test
    // reads `warnings` after the run returned.
    private(set) var warnings: [String] = []

    func intervalEnded(_ interval: IntervalEnd) {}

    func notice(_ notice: RunNotice) {
        if case .monitorWarning(let warning) = notice { warnings.append(warning) }
    }
}
