import Foundation
import Testing

@testable import LoadResults

/// summary.json's `login_paths`: per path the logins (and reconnects), round trips (mean and
/// distribution) and latency, from the per-path metrics and counters the sessions record — through
/// the interval log and across merged generators — and the text and HTML tables that show them.
@Suite struct LoginPathSummaryTests {
    /// One generator's interval: `logins` logins on `path`, `trips` round trips each, `reconnects` of them reconnects.
    static func snapshot(_ entries: [(path: String, logins: Int, trips: Int, reconnects: Int, milliseconds: UInt64)]) -> IntervalSnapshot {
        var snapshot = IntervalSnapshot(start: 0, end: 1)
        for entry in entries {
            let names = LoginPathSummary.MetricNames(path: entry.path)
            var histogram = LatencyHistogram()
            for _ in 0..<entry.logins { histogram.record(nanoseconds: entry.milliseconds * 1_000_000) }
            snapshot.latency[names.latency] = histogram
            snapshot.serviceLatency[names.latency] = histogram
            snapshot.counters[names.roundTrips, default: 0] += UInt64(entry.logins * entry.trips)
            snapshot.counters[names.roundTripBuckets[min(entry.trips, LoginPathSummary.maxRoundTrips) - 1], default: 0] += UInt64(entry.logins)
            if entry.reconnects > 0 { snapshot.counters[names.reconnects] = UInt64(entry.reconnects) }
        }
        return snapshot
    }

    @Test func pathsAddUpAcrossGeneratorsAndSurviveTheIntervalLog() throws {
        let a = Self.snapshot([("sasl2-bind2", 10, 6, 0, 20), ("fast", 4, 5, 4, 8)])
        let b = Self.snapshot([("sasl2-bind2", 10, 7, 0, 30), ("resumed", 2, 5, 2, 9)])
        let line = try ResultsDirectory.line(for: a.merging(b))
        let total = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line.dropLast())
        let paths = try #require(LoginPathSummary.paths(in: total))
        #expect(paths.keys.sorted() == ["fast", "resumed", "sasl2-bind2"])
        #expect(paths["sasl2-bind2"]?.count == 20 && paths["sasl2-bind2"]?.reconnects == 0)
        #expect(paths["sasl2-bind2"]?.roundTrips == LoginPathSummary.RoundTrips(mean: 6.5, distribution: ["6": 10, "7": 10]))
        #expect(paths["fast"]?.roundTrips.mean == 5 && paths["fast"]?.reconnects == 4)
        #expect(paths["resumed"]?.latencyMilliseconds.p50 ?? 0 > 8.9)
        #expect(LoginPathSummary.ordered(paths).map(\.path) == ["sasl2-bind2", "fast", "resumed"])

        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(), endedAt: Date(), stopReason: "completed", total: total, healths: [],
            peakConcurrent: 0, ledger: LedgerCounts())
        #expect(summary.loginPaths == paths)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any]
        let fast = (json?["login_paths"] as? [String: Any])?["fast"] as? [String: Any]
        #expect(fast?["count"] as? Int == 4 && fast?["reconnects"] as? Int == 4)
        #expect((fast?["round_trips"] as? [String: Any])?["distribution"] as? [String: Int] == ["5": 4])
        #expect((fast?["latency_ms"] as? [String: Any])?["p99"] != nil && fast?["service_latency_ms"] != nil)
    }

    @Test func withoutPerPathLoginsThereIsNoTable() {
        var snapshot = IntervalSnapshot()
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: 1_000_000)
        snapshot.latency["login"] = histogram
        #expect(LoginPathSummary.paths(in: snapshot) == nil)
        #expect(TextReport.renderLoginPaths(nil).isEmpty)
    }

    @Test func theTextAndHTMLTablesShowEachPath() throws {
        let total = Self.snapshot([("classic", 3, 8, 0, 40), ("fast", 2, 5, 2, 10), ("sasl2-bind2", 1, 20, 0, 60)])
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(), endedAt: Date(), stopReason: "completed", total: total, healths: [],
            peakConcurrent: 0, ledger: LedgerCounts())
        let text = TextReport.render(summary)
        let rows = text.split(separator: "\n").map(String.init)
        let header = try #require(rows.firstIndex { $0.hasPrefix("login paths") })
        #expect(rows[header + 2].hasPrefix("classic ") && rows[header + 2].contains("8×3"), "\(text)")
        #expect(rows[header + 3].hasPrefix("sasl2-bind2 ") && rows[header + 3].contains("≥16×1"), "\(text)")
        #expect(rows[header + 4].hasPrefix("fast ") && rows[header + 4].contains("5.00") && rows[header + 4].contains("5×2"), "\(text)")
        #expect(!rows.contains { $0.hasPrefix("  login.path.") }, "per-path logins are not repeated in the latency table")
        let html = HTMLReport.loginPathsSection(summary.loginPaths)
        #expect(html.contains("<h2>Login paths</h2>") && html.contains("<td>fast</td><td>2</td><td>2</td><td>5.00</td>"), "\(html)")
    }
}
