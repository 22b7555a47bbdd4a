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
        // One run per side: shown, not judged.
        #expect(forced.outcome == .insufficientRuns)
        #expect(forced.problems.count == 1)
        #expect(forced.rows.first { $0.metric.key == "login.p50" }?.indication == .noSignificantChange)
        let text = CompareTextReport.render(forced)
        #expect(text.contains("WARNING (--force)") && text.contains("login.p50") && text.contains("no verdict"))
        let threeEach = Comparison.make(
            baseline: [Self.run("a1"), Self.run("a2"), Self.run("a3")], candidate: [Self.run("b1", seed: 7), Self.run("b2"), Self.run("b3")],
            force: true)
        #expect(threeEach.outcome == .noRegression)
        #expect(threeEach.rows.first { $0.metric.key == "login.p50" }?.verdict == .noSignificantChange)
    }

    static func settings(
        tls: String? = nil, sasl: String? = nil, variables: [String: String]? = [:], churn: Double? = nil, reconnect: Int? = nil,
        accounts: Int? = 100, transports: [String]? = ["tcp"], endpoints: [String]? = ["127.0.0.1:5222"]
    ) -> RunSettings {
        var settings = RunSettings(
            host: "127.0.0.1", port: 5222, domain: "load.test", accounts: "1-100", accountPrefix: "user", tls: tls, insecure: true,
            sasl: sasl, outputDirectory: "out", intervalSeconds: 1, maxLatenessSeconds: 1, connectTimeoutSeconds: 10,
            messageGraceSeconds: 5, metricsPort: nil, eventLoops: 2, segment: "0/1")
        settings.variables = variables
        settings.churnPerSecond = churn
        settings.reconnectAttempts = reconnect
        settings.accountCount = accounts
        settings.transports = transports
        settings.endpoints = endpoints
        return settings
    }

    /// Every setting that changes the load is a reason, named with both values; the server address
    /// and output directory are not; settings an older manifest lacks (nil) are no difference.
    @Test(arguments: [
        (candidate: ComparabilityTests.settings(), reason: nil as String?),
        (candidate: ComparabilityTests.settings(variables: ["room": "big"]), reason: "different --var (room=big vs none"),
        (candidate: ComparabilityTests.settings(tls: "direct"), reason: "different TLS mode (direct vs the profile's"),
        (candidate: ComparabilityTests.settings(sasl: "PLAIN"), reason: "different SASL mechanism (PLAIN vs the profile's"),
        (candidate: ComparabilityTests.settings(churn: 5), reason: "different churn (5/s vs none"),
        (candidate: ComparabilityTests.settings(reconnect: 3), reason: "different reconnect attempts (3 vs the profile's"),
        (candidate: ComparabilityTests.settings(accounts: 200), reason: "different account count (200 vs 100"),
        (candidate: ComparabilityTests.settings(transports: ["tcp", "websocket"]), reason: "different transports (tcp, websocket vs tcp"),
        (candidate: ComparabilityTests.settings(endpoints: ["127.0.0.1:5222", "127.0.0.1:5223"]), reason: "different number of endpoints (2 vs 1"),
        (candidate: ComparabilityTests.settings(endpoints: ["127.0.0.1:6222"]), reason: nil),
        // An older manifest: none of the 0.2 keys, so nothing of them is compared.
        (candidate: ComparabilityTests.settings(variables: nil, accounts: nil, transports: nil, endpoints: nil), reason: nil),
    ])
    func everyLoadChangingSettingIsAReason(candidate: RunSettings, reason: String?) {
        var baselineRun = Self.run("a")
        baselineRun.manifest?.settings = Self.settings()
        var candidateRun = Self.run("b")
        candidateRun.manifest?.settings = candidate
        let reasons = Comparability.reasons(baseline: [baselineRun], candidate: [candidateRun])
        if let reason {
            #expect(reasons.count == 1 && reasons[0].contains(reason) && reasons[0].hasSuffix("in a)"), "\(reasons)")
        } else {
            #expect(reasons.isEmpty, "\(reasons)")
        }
    }

    @Test func everySettingDifferenceIsListedAtOnce() {
        var baselineRun = Self.run("a")
        baselineRun.manifest?.settings = Self.settings()
        var candidateRun = Self.run("b")
        candidateRun.manifest?.settings = Self.settings(
            tls: "none", sasl: "PLAIN", variables: ["x": "1"], churn: 2, reconnect: 1, accounts: 5, transports: ["bosh"],
            endpoints: ["a:1", "b:2", "c:3"])
        let reasons = Comparability.reasons(baseline: [baselineRun], candidate: [candidateRun])
        #expect(reasons.count == 8, "\(reasons)")
        let refused = Comparison.make(baseline: [baselineRun], candidate: [candidateRun])
        #expect(refused.outcome == .notComparable && refused.rows.isEmpty)
    }

    @Test func theComparisonRoundTripsThroughJSON() throws {
        let comparison = Comparison.make(baseline: [Self.run("a")], candidate: [Self.run("b")])
        let data = try JSONEncoder().encode(comparison)
        let json = String(decoding: data, as: UTF8.self)
        #expect(json.contains("\"outcome\":\"insufficient runs\"") && json.contains("\"ci_low\""))
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
