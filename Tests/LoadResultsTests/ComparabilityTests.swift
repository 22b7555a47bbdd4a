import Foundation
import Testing

@testable import LoadResults

/// `compare` refuses runs that are not comparable, listing every reason; `--force` turns the
/// reasons into warnings and judges anyway.
@Suite struct ComparabilityTests {
    static func run(
        _ directory: String, sha: String = "aa", seed: UInt64 = 42, load: String = "closed: 100 users",
        stopReason: String = "duration", saturated: Bool = false, summary: Bool = true
    ) -> MeasuredRun {
        var manifest = RunManifest(
            runID: directory, profiles: [.init(name: "compare", path: "profiles/compare.yaml", sha256: sha, weight: 1)],
            server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-100", tls: "profile",
            loadModel: load, seed: seed, commandLine: [], startedAt: Date(timeIntervalSince1970: 0), intervalSeconds: 1)
        manifest.stopReason = stopReason
        var total = IntervalSnapshot(start: 0, end: 20)
        total.counters[Counter.sessionsStarted.name] = 100
        total.counters[Counter.sessionsLoggedIn.name] = 100
        var histogram = LatencyHistogram()
        for ms in 1...100 { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        total.latency["login"] = histogram
        let health = GeneratorHealth(
            cpuPercent: saturated ? 1000 : 10, cpuSeconds: 1, rssBytes: 1, openFileDescriptors: 1,
            loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 1, cores: 2)
        let runSummary = RunSummary(
            runID: directory, profile: "compare", startedAt: Date(timeIntervalSince1970: 0),
            endedAt: Date(timeIntervalSince1970: 20), stopReason: stopReason, total: total,
            healths: [health], peakConcurrent: 100, ledger: LedgerCounts())
        return MeasuredRun(
            directory: directory, manifest: manifest, outcome: summary ? SummaryOutcome(runSummary) : nil, intervals: [MeasuredUnit(total)])
    }

    @Test func identicalSetUpsAreComparable() {
        #expect(Comparability.reasons(baseline: [Self.run("a")], candidate: [Self.run("b")]).isEmpty)
    }

    @Test func everyReasonIsListed() {
        let reasons = Comparability.reasons(
            baseline: [Self.run("a")],
            candidate: [
                Self.run("b", sha: "bb", seed: 7, load: "open: 5/s for 30s", stopReason: "interrupted", saturated: true),
                Self.run("c", summary: false),
            ])
        #expect(reasons.count == 6, "\(reasons)")
        #expect(reasons.contains { $0.contains("candidate b") && $0.contains("stop reason interrupted") })
        #expect(reasons.contains { $0.contains("candidate b") && $0.contains("saturated in 1 interval") })
        #expect(reasons.contains { $0.contains("candidate b") && $0.contains("different profile") })
        #expect(reasons.contains { $0.contains("candidate b") && $0.contains("different load") })
        #expect(reasons.contains { $0.contains("candidate b") && $0.contains("different seed (7 vs 42") })
        #expect(reasons.contains { $0.contains("candidate c") && $0.contains("no summary.json") })
    }

    @Test func notComparableRunsGetNoVerdictUnlessForced() {
        let baseline = [Self.run("a")]
        let candidate = [Self.run("b", seed: 7)]
        let refused = Comparison.make(baseline: baseline, candidate: candidate)
        #expect(refused.outcome == .notComparable)
        #expect(refused.rows.isEmpty)
        #expect(CompareTextReport.render(refused).contains("NOT COMPARABLE"))
        let forced = Comparison.make(baseline: baseline, candidate: candidate, force: true)
        #expect(forced.outcome == .noRegression)
        #expect(forced.problems.count == 1)
        #expect(forced.rows.first { $0.metric.key == "login.p50" }?.verdict == .noSignificantChange)
        let text = CompareTextReport.render(forced)
        #expect(text.contains("WARNING (--force)") && text.contains("login.p50") && text.contains("no regression"))
    }

    @Test func theComparisonRoundTripsThroughJSON() throws {
        let comparison = Comparison.make(baseline: [Self.run("a")], candidate: [Self.run("b")])
        let data = try JSONEncoder().encode(comparison)
        let json = String(decoding: data, as: UTF8.self)
        #expect(json.contains("\"outcome\":\"no regression\"") && json.contains("\"ci_low\""))
        let decoded = try JSONDecoder().decode(Comparison.self, from: data)
        #expect(decoded.rows == comparison.rows)
        #expect(decoded.outcome == comparison.outcome)
    }

    @Test func theHTMLComparisonIsSelfContainedAndDrawsBothSides() {
        let baseline = [Self.run("a")]
        let candidate = [Self.run("b")]
        let html = CompareHTMLReport.render(Comparison.make(baseline: baseline, candidate: candidate), baseline: baseline, candidate: candidate)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("<script") && !html.contains("src=\"http"))
        #expect(html.contains("login: latency by percentile") && html.contains("baseline") && html.contains("candidate"))
        #expect(html.contains("<td>login.p99</td>"))
        // One interval per run: the over-time chart still shows each series' point.
        #expect(html.contains("<circle"))
    }
}
