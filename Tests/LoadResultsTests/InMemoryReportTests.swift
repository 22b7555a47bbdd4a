import Foundation
import Testing

@testable import LoadResults

/// The report a run renders from memory at its end equals what `xmppload report DIR` renders from
/// the directory the run wrote: same HTML, same text report, same merged summary.
@Suite struct InMemoryReportTests {
    /// A run as a run holds it at its end: its intervals, its final manifest and its summary.
    struct HeldRun {
        var intervals: [IntervalSnapshot]
        var manifest: RunManifest
        var summary: RunSummary
    }

    /// A deterministic run of `count` intervals with fractional times, health values and dates.
    static func heldRun(seed: UInt64, count: Int) -> HeldRun {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % bound
        }
        var intervals: [IntervalSnapshot] = []
        var cumulative = IntervalSnapshot()
        var healths: [GeneratorHealth] = []
        var end = 0.0
        for index in 0..<count {
            let start = end
            end += 5 + Double(next(1_000_000)) / 1e7
            var snapshot = IntervalSnapshot(start: start, end: end)
            for name in ["login", "login.sasl", "message", "muc.message", "roster.get"] where next(5) > 0 {
                var corrected = LatencyHistogram()
                var service = LatencyHistogram()
                for _ in 0..<(20 + next(300)) {
                    let nanoseconds = 1_000 + next(3_000_000_000)
                    corrected.record(nanoseconds: nanoseconds)
                    service.record(nanoseconds: nanoseconds / 2 + 1_000)
                }
                snapshot.latency[name] = corrected
                snapshot.serviceLatency[name] = service
            }
            for counter in Counter.allCases where next(3) > 0 { snapshot.counters[counter.name] = next(50_000) }
            if next(2) == 0 { snapshot.errors["connect-refused"] = 1 + next(3) }
            if next(3) == 0 { snapshot.errors["timeout-login"] = 1 + next(5) }
            snapshot.gauges[SessionGauge.online.name] = Int64(next(500))
            snapshot.gauges[SessionGauge.connecting.name] = Int64(next(50))
            snapshot.gauges[SessionGauge.live.name] = Int64(500 + next(50))
            snapshot.loopLag.record(nanoseconds: next(80_000_000))
            snapshot.ledger = LedgerCounts(lost: next(3), duplicated: next(2), reordered: next(2))
            if next(2) == 0 { snapshot.rooms["room\(next(4))@conference.load.test"] = RoomFanout(sent: 10, expected: 40, received: 30 + next(10)) }
            var health = GeneratorHealth(
                cpuPercent: Double(next(10_000)) / 77, cpuSeconds: Double(next(10_000)) / 1_234,
                rssBytes: 50_000_000 + next(1_000_000), openFileDescriptors: Int(next(600)),
                loopLagP99Milliseconds: Double(next(100_000)) / 1_000 / 3,
                loopLagMaxMilliseconds: Double(next(100_000)) / 999, cores: 2)
            if index == 1 { health.saturated = true }
            snapshot.health = health
            healths.append(health)
            cumulative.accumulate(snapshot)
            intervals.append(snapshot)
        }
        let startedAt = Date(timeIntervalSince1970: 1_795_000_000.123_456)
        let endedAt = startedAt.addingTimeInterval(end + 0.987_654)
        var manifest = RunManifest(
            runID: "20261123-101010-abc\(seed)",
            profiles: [.init(name: "chat", path: "profiles/chat.yaml", sha256: "00ff", weight: 1)],
            server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-200", tls: "profile",
            loadModel: "closed: 200 sessions, ramp 5s, duration 20s", seed: seed,
            commandLine: ["xmppload", "run", "profiles/chat.yaml"], startedAt: startedAt,
            intervalSeconds: 5)
        manifest.endedAt = endedAt
        manifest.stopReason = StopReason.duration.rawValue
        // As LoadRun: the summary's ledger adds what was still missing at the end.
        var ledger = cumulative.ledger
        ledger.lost += 3
        let summary = RunSummary(
            runID: manifest.runID, profile: "chat", startedAt: startedAt, endedAt: endedAt,
            stopReason: StopReason.duration.rawValue, total: cumulative, healths: healths,
            peakConcurrent: 517, ledger: ledger)
        return HeldRun(intervals: intervals, manifest: manifest, summary: summary)
    }

    /// Writes the run's files as LoadRun does.
    static func write(_ run: HeldRun) throws -> ResultsDirectory {
        let directory = ResultsDirectory(
            path: FileManager.default.temporaryDirectory
                .appendingPathComponent("xmppload-inmemory-\(UUID().uuidString)").path)
        try directory.create()
        try directory.writeManifest(run.manifest)
        let log = try IntervalLogWriter(directory: directory)
        for interval in run.intervals { try log.append(interval) }
        try directory.writeSummary(run.summary)
        return directory
    }

    static func fromMemory(_ run: HeldRun, directory: ResultsDirectory) throws -> MergedResults {
        var timeline = MergedResults.Timeline()
        for interval in run.intervals { timeline.add(interval) }
        return MergedResults(directory: directory.path, manifest: run.manifest, summary: run.summary, timeline: timeline)
    }

    static func summaryJSON(_ summary: RunSummary) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(summary), as: UTF8.self)
    }

    @Test(arguments: [(UInt64(1), 1), (2, 4), (3, 12), (4, 60)])
    func memoryAndDirectoryRenderTheSame(seed: UInt64, count: Int) throws {
        let run = Self.heldRun(seed: seed, count: count)
        let directory = try Self.write(run)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }

        let memory = try Self.fromMemory(run, directory: directory)
        let disk = try MergedResults.load(directories: [directory.path])

        #expect(memory.points == disk.points)
        #expect(memory.total == disk.total)
        #expect(memory.directories == disk.directories)
        let html = HTMLReport.render(memory)
        #expect(html == HTMLReport.render(disk))
        #expect(TextReport.render(memory.summary) == TextReport.render(disk.summary))
        #expect(try Self.summaryJSON(memory.summary) == Self.summaryJSON(disk.summary))
        // The report really carries the run: its charts, its lost messages, its saturation warning.
        #expect(html.contains("Sessions") && html.contains(run.manifest.runID))
        #expect(memory.summary.messages.lost == run.summary.messages.lost)
        #expect(html.contains(count > 1 ? "saturated in 1 interval" : "<h1>"))
        #expect(memory.points.count == count)
    }

    /// A histogram reads as bucket values, so an interval held in memory reads exactly as its line in
    /// `intervals.jsonl`: an exact extreme inside a bucket (2,098,130 µs lies in a 1,024 µs bucket)
    /// never shows, and the timeline needs no conversion per interval.
    @Test func anIntervalReadsTheSameBeforeAndAfterItsFile() throws {
        var interval = IntervalSnapshot(start: 0, end: 5)
        var histogram = LatencyHistogram()
        histogram.record(microseconds: 2_098_130)
        histogram.record(microseconds: 1_500)
        interval.latency["message"] = histogram
        var timeline = MergedResults.Timeline()
        timeline.add(interval)
        let decoded = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: ResultsDirectory.line(for: interval))
        let read = try #require(decoded.latency["message"])
        for percentile in [0.0, 50, 99, 100] {
            #expect(histogram.microseconds(atPercentile: percentile) == read.microseconds(atPercentile: percentile))
        }
        #expect(histogram.maxMicroseconds == read.maxMicroseconds && histogram.minMicroseconds == read.minMicroseconds)
        #expect(histogram.maxMicroseconds != 2_098_130 && histogram.maxMicroseconds - 2_098_130 < 2_048)
        #expect(histogram.minMicroseconds == 1_500)
        #expect(timeline.points == [IntervalPoint(decoded)])
        #expect(timeline.total.latency["message"] == read)
    }

    /// The timeline keeps one chart point per interval, the total and the peak of live sessions.
    @Test func timelineReducesIntervalsAsTheyCome() {
        let run = Self.heldRun(seed: 9, count: 5)
        var timeline = MergedResults.Timeline()
        for interval in run.intervals { timeline.add(interval) }
        #expect(timeline.points.count == 5)
        #expect(timeline.healths.count == 5)
        #expect(timeline.peakLive == run.intervals.map { $0.gauge(.live) }.max())
        #expect(timeline.total.counter(.sessionsStarted) == run.summary.sessions.started)
        #expect(timeline.total.end == run.intervals.last?.end)
    }
}
