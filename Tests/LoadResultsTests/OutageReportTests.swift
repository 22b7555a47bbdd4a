import Foundation
import Testing

@testable import LoadResults

/// The outage analysis in summary.json, the text report, report.html and `report DIR`: a run with two
/// server restarts, written as a run writes it and read back, equals the one analysed from memory.
@Suite struct OutageReportTests {
    /// 120 intervals of 5 s (the load stops at 600 s, then two intervals of log-out), a restart at
    /// 200 s and at 400 s, RSS growing 1 MiB per hour plus a spike before the tail.
    static func heldRun() -> InMemoryReportTests.HeldRun {
        var rows: [OutageFinderTests.Row] = []
        for index in 0..<122 {
            let t = index * 5
            switch t {
            case 200, 400: rows.append(.init(online: 0, errors: 300, errorKind: "stream-system-shutdown"))
            case 205, 210, 405, 410: rows.append(.init(online: 0, errors: 400, reconnects: 400))
            case 215, 415: rows.append(.init(online: 280, errors: 1, reconnects: 290, reconnected: 280, reconnectLoginsMs: [50, 70, 1200]))
            case 220, 420: rows.append(.init(online: 300, reconnects: 20, reconnected: 20, reconnectLoginsMs: [40]))
            case 600...: rows.append(.init(online: 0))
            default: rows.append(.init(online: min(300, Int64(t) * 3)))
            }
        }
        var intervals = OutageFinderTests.intervals(rows)
        var cumulative = IntervalSnapshot()
        var healths: [GeneratorHealth] = []
        for index in intervals.indices {
            let hours = intervals[index].end / 3600
            let spike: UInt64 = intervals[index].end < 150 ? 40_000_000 : 0
            let health = GeneratorHealth(
                cpuPercent: 30, cpuSeconds: 1.5, rssBytes: 80_000_000 + UInt64(hours * 1_048_576) + spike, openFileDescriptors: 320,
                loopLagP99Milliseconds: 2, loopLagMaxMilliseconds: 5, cores: 2)
            intervals[index].health = health
            intervals[index].counters[Counter.messagesSent.name] = 50
            healths.append(health)
            cumulative.accumulate(intervals[index])
        }
        let startedAt = Date(timeIntervalSince1970: 1_795_000_000)
        var manifest = RunManifest(
            runID: "20261123-140000-soak", profiles: [.init(name: "soak-restart", path: "profiles/soak-restart.yaml", sha256: "00", weight: 1)],
            server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-300", tls: "profile",
            loadModel: "closed: 300 sessions, ramp 100s, duration 600s", seed: 1,
            commandLine: ["xmppload", "run", "profiles/soak-restart.yaml"], startedAt: startedAt, intervalSeconds: 5)
        manifest.plannedLoad = PlannedLoad(summary: "closed: 300 users", phases: [], stopAfterSeconds: 600, gracefulStopSeconds: 10)
        manifest.endedAt = startedAt.addingTimeInterval(610)
        manifest.stopReason = StopReason.duration.rawValue
        var ledger = cumulative.ledger
        ledger.lost = 11
        var summary = RunSummary(
            runID: manifest.runID, profile: "soak-restart", startedAt: startedAt, endedAt: manifest.endedAt!,
            stopReason: StopReason.duration.rawValue, total: cumulative, healths: healths, peakConcurrent: 300, ledger: ledger)
        summary.messages.lostWhenSent = [
            MessageLossBucket(start: 195, end: 200, lost: 3), MessageLossBucket(start: 400, end: 405, lost: 5),
            MessageLossBucket(start: 500, end: 505, lost: 1), MessageLossBucket(start: 600, end: 605, lost: 2),
        ]
        return InMemoryReportTests.HeldRun(intervals: intervals, manifest: manifest, summary: summary)
    }

    @Test func summaryReportsBothOutagesTheLossSplitAndTheRSSTail() throws {
        let run = Self.heldRun()
        let directory = try InMemoryReportTests.write(run)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let disk = try MergedResults.load(directories: [directory.path])
        let summary = disk.summary

        let outages = try #require(summary.outages)
        #expect(outages.map(\.start) == [200, 400])
        #expect(outages.map(\.dropped) == [300, 300])
        #expect(outages.map(\.timeToRecover) == [25, 25])
        #expect(outages.map(\.reconnects) == [1110, 1110])
        #expect(outages.map(\.messagesLost) == [3, 5])
        #expect(outages.allSatisfy { $0.reconnectLogin?.count == 4 && abs(($0.reconnectLogin?.p99 ?? 0) - 1200) < 2 })
        #expect(
            summary.messageLoss
                == MessageLossSplit(inOutages: 8, outside: 1, afterLoad: 2, outsideBuckets: [MessageLossBucket(start: 500, end: 505, lost: 1)]))

        // RSS over the end of a 600-s load: its last 2/3 (400 s) is shorter than a trend needs
        // (TrendPolicy: 10 minutes in 20 intervals), so no RSS tail is judged (rssTailWindow and
        // rssTailAfterOutages cover the computation on longer loads).
        #expect(summary.rssTail == nil)

        // summary.json's fields, the text report and report.html.
        let json = try InMemoryReportTests.summaryJSON(summary)
        for key in [
            "\"outages\"", "\"start_s\" : 200", "\"time_to_recover_s\" : 25", "\"reconnect_login\"", "\"message_loss\"",
            "\"in_outages\" : 8", "\"lost_when_sent\"",
        ] {
            #expect(json.contains(key), "summary.json lacks \(key)")
        }
        let text = TextReport.render(summary)
        #expect(text.contains("outages: 2"))
        #expect(text.contains("1. 200.0–215.0 s: online 300 → 0 (dropped 300)"))
        #expect(text.contains("messages lost: 8 sent inside outage windows, 1 outside (sent at 500.0 s ×1), 2 sent after the load stopped"))
        #expect(!text.contains("generator RSS over the last"))
        let html = HTMLReport.render(disk)
        #expect(html.contains("<h2>Outages</h2>"))
        #expect(html.components(separatedBy: "class=\"band\"").count - 1 == 4)  // two bands on two charts
        #expect(html.contains("<td>200.0–215.0</td><td>300 → 0</td><td>300</td>"))

        // What `run` writes (the same analysis over the intervals held in memory) reads back the same.
        var held = MergedResults.Timeline(loadEnd: 600)
        for interval in run.intervals { held.add(interval) }
        var written = run.summary
        written.analyseOutages(timeline: held, loadEnd: 600, losses: run.summary.messages.lostWhenSent)
        #expect(written.outages == summary.outages && written.rssTail == summary.rssTail && written.messageLoss == summary.messageLoss)
        let decoded = try ResultsDirectory.decoder.decode(RunSummary.self, from: Data(json.utf8))
        #expect(decoded.outages == summary.outages && decoded.messageLoss == summary.messageLoss && decoded.rssTail == summary.rssTail)
    }

    /// One generator of several (its verdict leaves loss to `report`): the console, the outage rows
    /// and report.html print no loss figure of its own (its ledger counts messages other generators
    /// received as lost), only that `report` judges it; the run of one generator keeps its figures.
    @Test func aSegmentPrintsNoLossFigureOfItsOwn() throws {
        let run = Self.heldRun()
        var held = MergedResults.Timeline(loadEnd: 600)
        for interval in run.intervals { held.add(interval) }
        var summary = run.summary
        summary.messages.lost = 1008
        summary.analyseOutages(timeline: held, loadEnd: 600, losses: summary.messages.lostWhenSent)
        #expect(summary.messageLoss?.outside == 998, "the split a segment computes from its own ledger")
        summary.verdict = RunOutcome(
            kind: .ranAsPlanned, reason: "ok", work: RunWork(sessionsStarted: 300, messagesSent: 6000, messagesLost: nil))
        #expect(summary.lossJudgedByReport)
        let text = TextReport.render(summary)
        #expect(text.contains("loss judged by `report` over every generator"), "the verdict's own words")
        #expect(text.contains("messages lost: judged by `report` over every generator"))
        #expect(text.contains("lost judged by `report` over every generator  duplicated"))
        #expect(!text.contains("outside") && !text.contains("1008") && !text.contains("messages lost;"), "\(text)")
        let html = HTMLReport.render(MergedResults(directory: "/tmp/none", manifest: run.manifest, summary: summary, timeline: held))
        #expect(html.contains("Messages lost: judged by `report` over every generator."))
        #expect(!html.contains(" outside") && !html.contains(">1008<"))

        // The same summary judged by one generator alone (lost known): the figures are printed.
        summary.verdict = RunOutcome(kind: .messagesLost, reason: "lost", work: RunWork(sessionsStarted: 300, messagesLost: 1008))
        #expect(!summary.lossJudgedByReport)
        #expect(TextReport.render(summary).contains("messages lost: 8 sent inside outage windows, 998 outside"))
    }

    /// The report a run renders from memory (its timeline told the load's end) equals `report DIR`.
    @Test func memoryAndDirectoryAgree() throws {
        let run = Self.heldRun()
        let directory = try InMemoryReportTests.write(run)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        var timeline = MergedResults.Timeline(loadEnd: 600)
        for interval in run.intervals { timeline.add(interval) }
        let memory = MergedResults(directory: directory.path, manifest: run.manifest, summary: run.summary, timeline: timeline)
        let disk = try MergedResults.load(directories: [directory.path])
        #expect(try InMemoryReportTests.summaryJSON(memory.summary) == InMemoryReportTests.summaryJSON(disk.summary))
        #expect(HTMLReport.render(memory) == HTMLReport.render(disk))
    }

    /// Without a known load end the final log-out is still no outage (online falls without a
    /// connection error); without send times there is no loss split; an older summary.json reads with
    /// no outage fields.
    @Test func olderResultsStillRead() throws {
        var run = Self.heldRun()
        run.manifest.plannedLoad = nil
        run.summary.messages.lostWhenSent = nil
        let directory = try InMemoryReportTests.write(run)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let summary = try MergedResults.load(directories: [directory.path]).summary
        #expect(summary.outages?.count == 2)
        #expect(summary.outages?.allSatisfy { $0.start < 600 && $0.timeToRecover != nil } == true)
        #expect(summary.messageLoss == nil && summary.outages?.first?.messagesLost == nil)

        // A summary.json written before the outage fields existed.
        var object = try #require(JSONSerialization.jsonObject(with: Data(InMemoryReportTests.summaryJSON(summary).utf8)) as? [String: Any])
        for key in ["outages", "message_loss", "rss_tail"] { object[key] = nil }
        var messages = try #require(object["messages"] as? [String: Any])
        messages["lost_when_sent"] = nil
        object["messages"] = messages
        let old = try ResultsDirectory.decoder.decode(RunSummary.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.outages == nil && old.rssTail == nil && old.messageLoss == nil && old.messages.lostWhenSent == nil)
        #expect(old.outageText.isEmpty && !TextReport.render(old).contains("outages"))
        // The first files with `message_loss` had no `after_load`.
        let early = try ResultsDirectory.decoder.decode(
            MessageLossSplit.self, from: Data(#"{"in_outages": 3, "outside": 1, "outside_by_interval": []}"#.utf8))
        #expect(early == MessageLossSplit(inOutages: 3, outside: 1, afterLoad: 0, outsideBuckets: []))
    }

    @Test(arguments: [
        // (load end, interval count) → tail start: the last 2/3 of a short load, the last 20 minutes of a long one.
        (900.0, 180, 300.0), (1800, 360, 600), (7200, 1440, 6000),
    ])
    func rssTailWindow(loadEnd: Double, count: Int, start: Double) throws {
        let points = (0..<count).map { index -> IntervalPoint in
            var interval = IntervalSnapshot(start: Double(index) * 5, end: Double(index + 1) * 5)
            interval.health = GeneratorHealth(
                cpuPercent: 1, cpuSeconds: 0.05, rssBytes: 100_000_000 - UInt64(index) * 1000, openFileDescriptors: 10,
                loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 1, cores: 2)
            return IntervalPoint(interval)
        }
        let tail = try #require(RSSTail(points: points, loadEnd: loadEnd))
        #expect(tail.start == start && tail.end == loadEnd)
        #expect(tail.trend.intervals == Int((loadEnd - start) / 5))
        // 1000 bytes less every 5 s: −720,000 bytes per hour, a significant drift down.
        #expect(abs(tail.trend.slopePerHour + 720_000) < 1)
        #expect(tail.trend.significant && !tail.trend.driftingUp)
        #expect(RSSTail(points: Array(points.prefix(2)), loadEnd: 10) == nil)
        #expect(tail.afterOutages == nil && tail.afterOutagesStart == nil)
    }

    /// A tail shorter than a trend needs (a 600-s load's last 400 s) is not judged; the slope after
    /// the last outage is judged only when 10 minutes of load follow the storm.
    @Test func rssTailAfterOutages() throws {
        let points = (0..<1440).map { index -> IntervalPoint in
            var interval = IntervalSnapshot(start: Double(index) * 5, end: Double(index + 1) * 5)
            interval.health = GeneratorHealth(
                cpuPercent: 1, cpuSeconds: 0.05, rssBytes: 100_000_000 + UInt64(index) * 1000, openFileDescriptors: 10,
                loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 1, cores: 2)
            return IntervalPoint(interval)
        }
        #expect(RSSTail(points: Array(points.prefix(120)), loadEnd: 600) == nil)
        func outage(stormEnd: Double) -> Outage {
            Outage(
                start: stormEnd - 30, end: stormEnd - 20, onlineBefore: 100, onlineLowest: 0, dropped: 100, connectionErrors: 100,
                reconnects: 100, reconnected: 100, stormEnd: stormEnd, lossWindowStart: stormEnd - 35)
        }
        let long = try #require(RSSTail(points: points, loadEnd: 7200, outages: [outage(stormEnd: 6300)]))
        #expect(long.afterOutagesStart == 6300 && long.afterOutages?.intervals == 180)
        #expect(abs((long.afterOutages?.slopePerHour ?? 0) - 720_000) < 1)
        let late = try #require(RSSTail(points: points, loadEnd: 7200, outages: [outage(stormEnd: 6900)]))
        #expect(late.afterOutages == nil && late.afterOutagesStart == nil)
    }
}
