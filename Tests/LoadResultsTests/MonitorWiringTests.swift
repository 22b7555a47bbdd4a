// The monitors as the run and `report` use them, on plain values: the reduced timeline, the
// attribution and costs from a timeline, the console text, summary.json and the reports, charts with
// gaps, merging generators' files, and `compare` judging the server's costs.
import Foundation
import Testing

@testable import LoadResults

@Suite struct MonitorWiringTests {
    static let gap = MonitorValuesTests.gap
    static let manifest = RunManifest(
        runID: "r", profiles: [], server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-1", tls: "none",
        loadModel: "m", seed: 1, segment: "0/1", commandLine: [], startedAt: Date(timeIntervalSince1970: 0), intervalSeconds: 5)

    /// One load interval of `seconds` with `logins` logins whose login p99 is `p99` ms, `online` sessions.
    static func snapshot(_ index: Int, seconds: Double = 5, logins: Int, p99: Double, online: Int64) -> IntervalSnapshot {
        var snapshot = IntervalSnapshot(start: Double(index) * seconds, end: Double(index + 1) * seconds)
        var histogram = LatencyHistogram()
        for _ in 0..<max(logins, 1) { histogram.record(nanoseconds: UInt64(p99 * 1_000_000)) }
        snapshot.latency["login"] = histogram
        snapshot.counters[Counter.sessionsLoggedIn.name] = UInt64(logins)
        snapshot.gauges[SessionGauge.online.name] = online
        return snapshot
    }

    @Test func theTimelineKeepsProcessesWholeAndAtMostSixteenChartedSeriesPlusTheListenQueue() {
        var timeline = MonitorTimeline(sources: [try! MonitorSource.parse("node=prometheus:http://127.0.0.1:9100/metrics")])
        var gauges: [String: Double] = [:]
        for index in 0..<40 { gauges["zz_series_\(index)"] = Double(index) }
        gauges["node_load1"] = 1.5
        let increases = ["node_netstat_TcpExt_ListenOverflows": 12.0, "sum by (mode) (node_cpu_seconds_total){mode=\"idle\"}": 1.2]
        for index in 0..<3 {
            timeline.add(
                MonitorInterval(
                    start: Double(index), end: Double(index + 1),
                    sources: ["node": Self.series(gauges, increases, 1), "prosody": Self.process(90, 1_000_000, 1, 1, 1, 20, nil)]))
        }
        let kept = timeline.intervals[2].sources["node"]?.series
        let keys = Set((kept?.gauges.keys).map(Array.init) ?? []).union((kept?.increases.keys).map(Array.init) ?? [])
        #expect(keys.count == MonitorTimeline.maxChartedSeries)
        // The preferred families come first, then the rest by name; the listen-queue counter always stays.
        #expect(
            timeline.charted["node"]?.prefix(3) == [
                "sum by (mode) (node_cpu_seconds_total){mode=\"idle\"}", "node_load1", "node_netstat_TcpExt_ListenOverflows",
            ])
        #expect(kept?.increases["node_netstat_TcpExt_ListenOverflows"] == 12)
        #expect(timeline.unchartedCount["node"] == 43 - MonitorTimeline.maxChartedSeries)
        #expect(timeline.intervals[0].sources["prosody"] == Self.process(90, 1_000_000, 1, 1, 1, 20, nil))
        #expect(timeline.processLabels == ["prosody"])
        // The summary is of everything, not of the reduced intervals.
        #expect(timeline.summary?.sources["node"]?.series?.count == 43)
        #expect(MonitorTimeline().summary == nil)
    }

    /// A timeline of `count` intervals: logins at a steady rate, latency rising from interval
    /// `slowFrom` on, the server at `busyCPU` % from then (10 % before), gaps where asked.
    static func timeline(
        count: Int = 12, slowFrom: Int = 6, busyCPU: Double = 98, gapsAt: Set<Int> = [], monitored: Bool = true, loadEnd: Double? = nil
    ) -> MergedResults.Timeline {
        var timeline = MergedResults.Timeline(
            loadEnd: loadEnd, monitors: monitored ? [try! MonitorSource.parse("prosody=process:42")] : [])
        for index in 0..<count {
            let slow = index >= slowFrom
            timeline.add(Self.snapshot(index, logins: 50 + index * 10, p99: slow ? 4_000 : 20, online: Int64(100 * (index + 1))))
            guard monitored else { continue }
            let reading =
                gapsAt.contains(index)
                ? Self.gap
                : Self.process(slow ? busyCPU : 10 + Double(index), UInt64(20_000_000 + index * 4_000_000), 5, 1, 1, 20, nil)
            timeline.add(monitor: MonitorInterval(start: Double(index) * 5, end: Double(index + 1) * 5, sources: ["prosody": reading]))
        }
        return timeline
    }

    @Test func aServerAtItsLimitWhileLatencyRoseIsServerBoundAndWithoutAMonitorUnseen() throws {
        let latency = ["login": RunSummary.Percentiles(LatencyHistogram())]
        let bound = ServerSide.attribution(Self.timeline(), latency: latency)
        #expect(bound.limitedBy == .server, "\(bound.evidence)")
        #expect(bound.evidence.contains("server-bound — prosody at 98 % of 1 core from 30 s to 60 s"), "\(bound.evidence)")
        let calm = ServerSide.attribution(Self.timeline(busyCPU: 40), latency: latency)
        #expect(calm.limitedBy == .unknown && calm.evidence.contains("neither side saturated"), "\(calm.evidence)")
        let unseen = ServerSide.attribution(Self.timeline(monitored: false), latency: latency)
        #expect(unseen.limitedBy == .unknown && unseen.evidence.contains("server side unseen (no --monitor)"), "\(unseen.evidence)")
        let gaps = ServerSide.attribution(Self.timeline(gapsAt: Set(0..<12)), latency: latency)
        #expect(gaps.limitedBy == .unknown && gaps.evidence.contains("gaps: timeout"), "\(gaps.evidence)")
        // Slow intervals after the load's end (the final log-out) are not the server giving out.
        let afterLoad = ServerSide.attribution(Self.timeline(loadEnd: 30), latency: latency)
        #expect(afterLoad.limitedBy == .none, "\(afterLoad.evidence)")
    }

    @Test func costsComeFromTheProcessSourcesOfTheTimeline() throws {
        let costs = try #require(ServerSide.costs(Self.timeline(slowFrom: 99)))
        #expect(costs.map(\.source) == ["prosody"])
        // RSS grows 4 MB per interval while 100 more sessions are online: 40 KB per session.
        #expect(abs((costs[0].rssPerSessionBytes ?? 0) - 40_000) < 1, "\(costs[0])")
        #expect(ServerSide.costs(Self.timeline(monitored: false)) == nil)
    }

    @Test func theConsoleShowsEachProcessAndMarksGapsNeverAsZeros() {
        let interval = MonitorInterval(
            start: 0, end: 5,
            sources: [
                "prosody": Self.process(98.4, 117_440_512, 5, 1, 1, 20, nil),
                "node": Self.series([:], ["node_netstat_TcpExt_ListenOverflows": 412], 5),
                "om": Self.gap, "quiet": Self.series(["g": 1], [:], 5),
            ])
        #expect(ProgressLine.monitorText(interval) == "node listen-overflows 412  om gap (timeout)  prosody 98%/1c 112 MiB")
        #expect(ProgressLine.monitorText(MonitorInterval(start: 0, end: 1, sources: [:])) == "")
    }

    @Test func aGapBreaksAChartsLineInsteadOfDrawingZero() {
        let chart = SVGChart(
            title: "t", xLabel: "s", yLabel: "%",
            series: [.init(name: "cpu", color: "#000", points: [(1, 10), (2, 20), (3, .nan), (4, 40), (5, 50), (6, .nan), (7, 70)])])
        let svg = chart.render()
        let path = svg.components(separatedBy: "<path d=\"")[1].components(separatedBy: "\"")[0]
        #expect(path.filter { $0 == "M" }.count == 3, "\(path)")
        #expect(path.filter { $0 == "L" }.count == 2, "\(path)")
        // The lone last point gets a dot; nothing is drawn at zero.
        #expect(svg.components(separatedBy: "class=\"point\"").count == 2)
    }

    @Test func theSummaryAndTheReportsCarryTheServerSide() throws {
        let timeline = Self.timeline()
        var summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 60), stopReason: "duration",
            total: timeline.total, healths: [], peakConcurrent: 1200, ledger: LedgerCounts(), descriptorLimits: nil)
        summary.monitors = timeline.monitor.summary
        summary.serverCosts = ServerSide.costs(timeline)
        var verdict = Verdict(thresholds: [], findings: [], outcome: RunOutcome(kind: .ranAsPlanned, reason: "fine"))
        verdict.limit = ServerSide.attribution(timeline, latency: summary.latencyMilliseconds)
        summary.apply(verdict)
        #expect(summary.limitedBy == "server")
        let json = try JSONSerialization.jsonObject(with: ResultsDirectory.encoder.encode(summary)) as? [String: Any]
        #expect(json?["limited_by"] as? String == "server")
        #expect((json?["limit"] as? [String: Any])?["evidence"] as? String == summary.limit?.evidence)
        #expect((json?["monitors"] as? [String: Any])?["prosody"] != nil)
        #expect((json?["server_costs"] as? [[String: Any]])?.first?["source"] as? String == "prosody")
        let text = TextReport.render(summary)
        #expect(text.contains("limited by server: login p99 "), "\(text)")
        #expect(text.contains("server (--monitor)\n  prosody"), "\(text)")
        #expect(text.contains("server costs (marginal"), "\(text)")
        let results = MergedResults(directory: "d", manifest: Self.manifest, summary: summary, timeline: timeline)
        let html = HTMLReport.render(results)
        #expect(html.contains("Server CPU (% of one core)") && html.contains("prosody usable (1 core)") && html.contains("Server resident memory"))
        #expect(html.contains("<b>limited by server</b>"))
    }

    @Test func generatorsMergeTheirMonitorLinesAndInterleavedLinesDoNotMisalignTheIntervals() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("monitor-merge-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        for (index, offset) in [0, 1].enumerated() {
            let directory = ResultsDirectory(path: "\(base)/g\(index)")
            try directory.create()
            var data = Data()
            for k in 0..<4 {
                data += try ResultsDirectory.line(for: Self.snapshot(k, logins: 10, p99: 20, online: 10))
                // The second generator's monitor lines come one interval later (a slow scrape).
                if k >= offset {
                    data +=
                        MonitorInterval(
                            start: Double(k - offset) * 5, end: Double(k - offset + 1) * 5,
                            sources: ["prosody": Self.process(Double(10 * index + k), 1, 5, 1, 1, 20, nil)]
                        ).line
                }
            }
            try data.write(to: URL(fileURLWithPath: directory.file(ResultsDirectory.intervalsFile)))
        }
        let merged = try MergedResults.load(directories: ["\(base)/g0", "\(base)/g1"])
        #expect(merged.points.count == 4)
        #expect(merged.total.counter(.sessionsLoggedIn) == 80)
        #expect(merged.monitor.intervals.count == 4)
        // One server watched by both: the first generator's sample, never a sum.
        #expect(merged.monitor.intervals[1].sources["prosody"]?.process?.cpuPercent == 1)
        #expect(merged.summary.limitedBy == "none", "\(merged.summary.limit?.evidence ?? "")")
    }

    static func costRun(_ name: String, cpuPerLogin: Double) -> MeasuredRun {
        let costs = ServerCosts(
            source: "prosody", cpuPerLoginMilliseconds: cpuPerLogin, cpuPerMessageMilliseconds: nil, idleCPUPercent: 1, cpuFitR2: 0.99,
            rssPerSessionBytes: 40_000, rssFitR2: 0.99, intervalsUsed: 10, note: nil)
        return MeasuredRun(
            directory: name, manifest: nil,
            outcome: SummaryOutcome(stopReason: "duration", saturatedIntervals: 0, messagesLost: 0, serverCosts: [costs]),
            intervals: [CompareJudgementTests.unit([20], started: 10)])
    }

    @Test func compareJudgesTheServersCostsLikeTheClientMetrics() throws {
        // Three rounds; the candidate's server spends 30 % more CPU per login, the same memory per session.
        let baseline = [4.0, 4.2, 3.9].enumerated().map { Self.costRun("a\($0.offset)", cpuPerLogin: $0.element) }
        let candidate = [5.2, 5.5, 5.0].enumerated().map { Self.costRun("b\($0.offset)", cpuPerLogin: $0.element) }
        let comparison = Comparison.make(
            baseline: baseline, candidate: candidate, bootstrap: Bootstrap(resamples: 500, seed: 1), force: true, paired: true)
        let cpu = try #require(comparison.rows.first { $0.metric.key == "server.cpu_per_login" })
        #expect(cpu.verdict == .regressed && abs(cpu.change! - 29.9) < 1, "\(cpu)")
        let memory = try #require(comparison.rows.first { $0.metric.key == "server.rss_per_session" })
        #expect(memory.verdict == .noSignificantChange && memory.metric.unit == "B", "\(memory)")
        #expect(comparison.regressed.contains("server.cpu_per_login"))
        let text = CompareTextReport.render(comparison)
        #expect(text.contains("server.cpu_per_login") && text.contains("4.03 ms"), "\(text)")
        // A tolerance names the costs as `server` (all) or by key.
        #expect(try Tolerances.parse(["server=40%"]).tolerance(for: cpu.metric) == 40)
        #expect(try Tolerances.parse(["server.cpu_per_login=35%"]).tolerance(for: cpu.metric) == 35)
        #expect(Tolerances().tolerance(for: cpu.metric) == 10)
    }
}

extension MonitorWiringTests {
    /// The fixtures of `MonitorValuesTests`, by position.
    static func process(
        _ cpu: Double, _ rss: UInt64, _ seconds: Double, _ cores: Int, _ threads: Int, _ fds: Int?, _ partial: Bool?
    ) -> MonitorReading {
        MonitorValuesTests.process(cpu: cpu, rss: rss, seconds: seconds, cores: cores, threads: threads, fds: fds, partial: partial)
    }

    static func series(_ gauges: [String: Double], _ increases: [String: Double], _ seconds: Double?) -> MonitorReading {
        MonitorValuesTests.series(gauges: gauges, increases: increases, seconds: seconds)
    }
}
