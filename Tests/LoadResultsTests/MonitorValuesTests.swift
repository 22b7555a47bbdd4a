import Foundation
import Testing

@testable import LoadResults

/// Monitor intervals as values: their intervals.jsonl line, merging across generators, the summary
/// built from them, and pairing them with the load's intervals.
@Suite struct MonitorValuesTests {
    static func process(
        cpu: Double, rss: UInt64, seconds: Double = 1, cores: Int = 1, threads: Int = 1, fds: Int? = 20, partial: Bool? = nil
    )
        -> MonitorReading
    {
        .process(
            ProcessSample(
                name: "prosody", pids: [42], seconds: seconds, cpuPercent: cpu, userPercent: cpu * 0.8, systemPercent: cpu * 0.2,
                usableCores: cores, busiestThreadPercent: cpu, rssBytes: rss, threads: threads, openFDs: fds,
                voluntarySwitchesPerSecond: 10, involuntarySwitchesPerSecond: 1, partial: partial))
    }

    static func series(gauges: [String: Double] = [:], increases: [String: Double] = [:], seconds: Double? = 1) -> MonitorReading {
        .series(SeriesSample(seconds: seconds, gauges: gauges, increases: increases, scrapeMilliseconds: 3, bodyBytes: 100, samplesSeen: 10))
    }

    static let gap = MonitorReading.gap(MonitorGap(.timeout, "no complete response within 2 s"))

    @Test func anIntervalIsOneTaggedLineThatReadsBack() throws {
        let interval = MonitorInterval(
            start: 0, end: 5,
            sources: ["prosody": Self.process(cpu: 97.5, rss: 50_000_000), "node": Self.series(increases: ["x_total": 4]), "om": Self.gap],
            events: [MonitorEvent(at: 5, source: "prosody", kind: .restarted, before: [41], after: [42])])
        let line = interval.line
        #expect(line.last == 0x0A)
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix("{\"end\":5,\"event\":\"monitor\""))
        #expect(text.contains("\"prosody\":{\"process\":{"))
        #expect(text.contains("\"cpu_percent\":97.5"))
        #expect(text.contains("\"om\":{\"gap\":{\"detail\":\"no complete response within 2 s\",\"reason\":\"timeout\"}}"))
        #expect(MonitorInterval.decode(line: line.dropLast()) == interval)
        // A load interval's line is not a monitor line, and the reverse: readers tell them apart.
        #expect(MonitorInterval.decode(line: Data("{\"start\":0,\"end\":1,\"counters\":{}}".utf8)) == nil)
        #expect((try? JSONDecoder().decode(IntervalSnapshot.self, from: line)) == nil)
        // A file of load intervals, control events and monitor lines, the last cut short by a crash.
        let control = ControlEvent(at: 3, action: "pause", text: "pause").line
        let load = try ResultsDirectory.line(for: IntervalSnapshot(start: 0, end: 5))
        let file = load + control + line + interval.line + interval.line.prefix(40)
        #expect(MonitorInterval.lines(in: file) == [interval, interval])
    }

    @Test func mergingKeepsOneSampleOfTheSameServerAndPrefersSamplesOverGaps() {
        var a = MonitorInterval(start: 0, end: 5, sources: ["prosody": Self.process(cpu: 50, rss: 1), "node": Self.gap])
        let b = MonitorInterval(
            start: 0.01, end: 5.02, sources: ["prosody": Self.process(cpu: 55, rss: 2), "node": Self.series(gauges: ["g": 1]), "other": Self.gap],
            events: [MonitorEvent(at: 5, source: "prosody", kind: .exited, before: [1], after: [])])
        a.merge(b)
        #expect(a.sources["prosody"] == Self.process(cpu: 50, rss: 1))  // the first generator's, not a sum
        #expect(a.sources["node"] == Self.series(gauges: ["g": 1]))  // a sample beats a gap
        #expect(a.sources["other"] == Self.gap)
        #expect(a.start == 0 && a.end == 5.02)
        #expect(a.events?.count == 1)
        a.merge(b)  // the same event twice is kept once
        #expect(a.events?.count == 1)
    }

    @Test func theSummaryWeighsCPUByTimeCountsGapsAndSumsCounters() {
        var accumulator = MonitorAccumulator(sources: [
            try! MonitorSource.parse("process:prosody"), try! MonitorSource.parse("node=prometheus:http://h:1/metrics"),
            try! MonitorSource.parse("never=process:1"),
        ])
        accumulator.add(
            MonitorInterval(
                start: 0, end: 1,
                sources: ["prosody": Self.process(cpu: 20, rss: 100, seconds: 1), "node": Self.series(gauges: ["load": 1], increases: ["ov": 2])]))
        accumulator.add(
            MonitorInterval(
                start: 1, end: 4,
                sources: [
                    "prosody": Self.process(cpu: 100, rss: 300, seconds: 3, fds: 40),
                    "node": Self.series(gauges: ["load": 3], increases: ["ov": 10], seconds: 3),
                ]))
        accumulator.add(MonitorInterval(start: 4, end: 5, sources: ["prosody": Self.process(cpu: 60, rss: 200), "node": Self.gap]))
        let summary = accumulator.summary
        let prosody = summary.sources["prosody"]!
        #expect(prosody.intervals == 3 && prosody.gaps == 0)
        #expect(prosody.process?.cpuSeconds == 0.2 + 3 + 0.6)
        #expect(abs(prosody.process!.cpuMeanPercent - 3.8 / 5 * 100) < 1e-9)
        #expect(prosody.process?.cpuMaxPercent == 100)
        #expect(prosody.process?.rssStartBytes == 100 && prosody.process?.rssEndBytes == 200 && prosody.process?.rssMaxBytes == 300)
        #expect(prosody.process?.openFDsMax == 40)
        let node = summary.sources["node"]!
        #expect(node.gaps == 1 && node.gapReasons == ["timeout": 1])
        #expect(node.series?["load"] == .init(kind: .gauge, intervals: 2, mean: 2, max: 3, last: 3))
        #expect(node.series?["ov"] == .init(kind: .counter, intervals: 2, mean: 3, max: 10.0 / 3, total: 12))
        // A source that never reported is listed, with nothing sampled.
        #expect(summary.sources["never"]?.intervals == 0)
        // summary.json's `monitors` is an object keyed by label.
        let json = String(decoding: try! JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"never\":{"))
        #expect(try! JSONDecoder().decode(MonitorSummary.self, from: Data(json.utf8)) == summary)
    }

    @Test func alignmentPairsByOverlapAndLeavesHolesNil() {
        let load = (0..<4).map { LoadPoint(start: Double($0), end: Double($0 + 1)) }
        let monitor = [
            MonitorInterval(start: 2.05, end: 3.05, sources: [:]),
            MonitorInterval(start: 0, end: 1, sources: [:]),
            // Overlaps interval 3 by 0.2 s only: not a match.
            MonitorInterval(start: 3.8, end: 4.8, sources: [:]),
        ]
        let aligned = MonitorAlignment.align(monitor, to: load)
        #expect(aligned.map { $0?.start } == [0, nil, 2.05, nil])
    }

    @Test func leastSquaresRecoversAPlaneAndRefusesCollinearColumns() throws {
        let rows = (0..<8).map { i -> (x: [Double], y: Double) in
            let a = Double(i)
            let b = Double((i * 3) % 5)
            return (x: [a, b], y: 2 + 0.5 * a + 0.25 * b)
        }
        let fit = try #require(LeastSquares.fit(rows))
        #expect(abs(fit.intercept - 2) < 1e-9)
        #expect(abs(fit.coefficients[0] - 0.5) < 1e-9 && abs(fit.coefficients[1] - 0.25) < 1e-9)
        #expect(abs(fit.r2 - 1) < 1e-9)
        #expect(LeastSquares.fit((0..<8).map { (x: [Double($0), 2 * Double($0)], y: Double($0)) }) == nil)
        #expect(LeastSquares.fit((0..<3).map { (x: [Double($0)], y: Double($0)) }) == nil)  // too few rows
        #expect(LeastSquares.fit((0..<8).map { _ in (x: [1.0], y: 1.0) }) == nil)  // constant column
    }
}
