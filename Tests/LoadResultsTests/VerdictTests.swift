import Foundation
import Testing

@testable import LoadResults

/// Thresholds, windows, trends and the run's own verdict judged from synthetic interval snapshots
/// whose values are known exactly.
@Suite struct VerdictTests {
    /// One 10 s interval `index` (0-based): `logins` logins at `loginMs` each, `errors` connect-refused or
    /// timeout errors (each ending its session unless `failed` says otherwise), `completed` sessions
    /// that ran their profile (default: as many as logged in), `online` sessions online, `rss` bytes.
    static func interval(
        _ index: Int, logins: UInt64 = 10, loginMs: UInt64 = 100, errors: UInt64 = 0,
        errorKind: String = "timeout-login", online: Int64 = 100, rss: UInt64 = 100_000_000,
        sent: UInt64 = 0, lost: UInt64 = 0, started: UInt64? = nil, failed: UInt64? = nil, completed: UInt64? = nil,
        dropped: UInt64 = 0, seconds: Double = 10
    ) -> IntervalSnapshot {
        var snapshot = IntervalSnapshot(start: Double(index) * seconds, end: Double(index + 1) * seconds)
        snapshot.counters[Counter.sessionsStarted.name] = started ?? logins + errors
        snapshot.counters[Counter.sessionsLoggedIn.name] = logins
        snapshot.counters[Counter.sessionsFailed.name] = failed ?? errors
        snapshot.counters[Counter.sessionsCompleted.name] = completed ?? logins
        snapshot.counters[Counter.droppedArrivals.name] = dropped
        snapshot.counters[Counter.messagesSent.name] = sent
        if logins > 0 {
            var histogram = LatencyHistogram()
            histogram.record(microseconds: loginMs * 1000, count: logins)
            snapshot.latency["login"] = histogram
        }
        if errors > 0 { snapshot.errors[errorKind] = errors }
        snapshot.gauges["sessions_online"] = online
        snapshot.ledger = LedgerCounts(lost: lost)
        snapshot.health = GeneratorHealth(
            cpuPercent: 20, cpuSeconds: 2, rssBytes: rss, openFileDescriptors: 50,
            loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 2, cores: 2)
        return snapshot
    }

    static let loginP99 = ThresholdQuantity.latency(metric: "login", statistic: .p99)

    static func evaluate(
        _ rules: [Threshold], _ intervals: [IntervalSnapshot], warmup: Double = 0,
        loadEnd: Double? = nil, target: Int? = nil, stopReason: String = "duration"
    ) -> Verdict {
        var evaluator = VerdictEvaluator(rules: rules, warmup: warmup, loadEnd: loadEnd, targetSessions: target)
        for snapshot in intervals { evaluator.add(snapshot) }
        return evaluator.verdict(stopReason: stopReason)
    }

    @Test func wholeRunThresholdsPassAndFailWithTheirValues() {
        let intervals = (0..<6).map { Self.interval($0, loginMs: $0 == 5 ? 900 : 100, errors: $0 == 2 ? 1 : 0) }
        let verdict = Self.evaluate(
            [
                Threshold(quantity: Self.loginP99, comparison: .less, bound: 800, unit: .milliseconds, text: "login.p99 < 800ms"),
                Threshold(quantity: Self.loginP99, comparison: .less, bound: 1000, unit: .milliseconds, text: "login.p99 < 1s"),
                Threshold(quantity: .errorsCount, comparison: .equal, bound: 0, unit: .count, text: "errors.count == 0"),
                Threshold(quantity: .errorsRate, comparison: .less, bound: 0.05, unit: .fraction, text: "errors.rate < 5%"),
                Threshold(
                    quantity: .latency(metric: "login", statistic: .count), comparison: .greaterOrEqual, bound: 60, unit: .count,
                    text: "login.count >= 60"),
                Threshold(
                    quantity: .latency(metric: "login", statistic: .rate), comparison: .greaterOrEqual, bound: 1, unit: .perSecond,
                    text: "login.rate >= 1/s"),
            ], intervals, loadEnd: 60)
        #expect(verdict.thresholds.map(\.status) == [.fail, .pass, .fail, .pass, .pass, .pass])
        // 10 of 60 logins took 900 ms: p99 is 900 ms (HDR, 3 significant digits).
        #expect(abs((verdict.thresholds[0].value ?? 0) - 900) < 1)
        #expect(verdict.thresholds[2].value == 1)
        // 1 error over 61 sessions started (no steps completed).
        #expect(abs((verdict.thresholds[3].value ?? 0) - 1.0 / 61) < 1e-12)
        #expect(verdict.thresholds[4].value == 60)
        #expect(verdict.thresholds[5].value == 1)
        #expect(!verdict.thresholdsPassed)
        // One session failed: the run did not go entirely as planned, yet it worked.
        #expect(verdict.outcome.kind == .sessionsFailed && !verdict.outcome.failed)
    }

    @Test func warmupExcludesItsIntervals() {
        let intervals = (0..<6).map { Self.interval($0, loginMs: $0 < 2 ? 3000 : 100, errors: $0 < 2 ? 5 : 0) }
        let rules = [
            Threshold(quantity: Self.loginP99, comparison: .less, bound: 800, unit: .milliseconds, text: "login.p99 < 800ms"),
            Threshold(quantity: .errorsCount, comparison: .equal, bound: 0, unit: .count, text: "errors.count == 0"),
        ]
        #expect(Self.evaluate(rules, intervals).thresholds.map(\.status) == [.fail, .fail])
        let warm = Self.evaluate(rules, intervals, warmup: 20)
        #expect(warm.thresholds.map(\.status) == [.pass, .pass])
        #expect(abs((warm.thresholds[0].value ?? 0) - 100) < 0.5)
    }

    @Test func everyWindowMustPassAndTheWorstIsReported() {
        // 12 intervals of 10 s = 4 windows of 30 s; the third window (60–90 s) has 3 failed sessions of
        // the 10 online at its start and the 33 started in it.
        let intervals = (0..<12).map { Self.interval($0, errors: $0 == 7 ? 3 : 0, online: 10) }
        let rule = Threshold(quantity: .errorsRate, comparison: .less, bound: 0.05, unit: .fraction, window: 30, text: "errors.rate < 5% over 30s")
        let result = Self.evaluate([rule], intervals).thresholds[0]
        #expect(result.status == .fail)
        #expect(result.windows == 4)
        #expect(result.worstWindow == ThresholdResult.Window(start: 60, end: 90, value: 3.0 / 43))
        // The whole run would pass: 3 errors over 123 sessions started.
        var whole = rule
        whole.window = nil
        #expect(Self.evaluate([whole], intervals).thresholds[0].status == .pass)
        // A run shorter than the window is judged as one partial window.
        let short = Self.evaluate([rule], Array(intervals.prefix(2))).thresholds[0]
        #expect(short.status == .pass && short.windows == 1 && short.note != nil)
    }

    @Test func sessionsOnlineIsTheLowestDuringTheLoadAsFractionOfTheTarget() {
        // Online 100 during the load, then falling while sessions log out after 60 s.
        let intervals = (0..<8).map { Self.interval($0, online: $0 == 3 ? 96 : $0 >= 6 ? 10 : 100) }
        let percent = Threshold(quantity: .sessionsOnline, comparison: .greaterOrEqual, bound: 0.95, unit: .fraction, text: "sessions.online >= 95%")
        let absolute = Threshold(quantity: .sessionsOnline, comparison: .greaterOrEqual, bound: 97, unit: .count, text: "sessions.online >= 97")
        let verdict = Self.evaluate([percent, absolute], intervals, loadEnd: 60, target: 100)
        #expect(verdict.thresholds.map(\.status) == [.pass, .fail])
        #expect(verdict.thresholds[0].value == 0.96)
        #expect(verdict.thresholds[1].value == 96)
        // Without a target (open model) a percentage cannot be judged.
        let open = Self.evaluate([percent], intervals, loadEnd: 60, target: nil).thresholds[0]
        #expect(open.status == .noData && open.value == nil && open.note != nil)
        // Without a planned end, every interval but the last counts.
        let unplanned = Self.evaluate([absolute], intervals, target: 100).thresholds[0]
        #expect(unplanned.value == 10)
    }

    @Test func messageLossAddsTheLossesOnlyTheEndRevealed() {
        let intervals = (0..<3).map { Self.interval($0, sent: 100, lost: $0 == 1 ? 1 : 0) }
        var evaluator = VerdictEvaluator(rules: [
            Threshold(quantity: .messagesLost, comparison: .equal, bound: 0, unit: .count, text: "messages.lost == 0"),
            Threshold(quantity: .messagesLoss, comparison: .less, bound: 0.01, unit: .fraction, text: "messages.loss < 1%"),
        ])
        for snapshot in intervals { evaluator.add(snapshot) }
        #expect(evaluator.lostInIntervals == 1)
        let results = evaluator.verdict(stopReason: "completed", finalLost: 2).thresholds
        #expect(results.map(\.value) == [3, 0.01])
        #expect(results.map(\.status) == [.fail, .fail])
    }

    @Test func noSamplesIsNoDataNotAFailure() {
        let intervals = (0..<3).map { Self.interval($0) }
        let rule = Threshold(
            quantity: .latency(metric: "message", statistic: .p99), comparison: .less,
            bound: 100, unit: .milliseconds, text: "message.p99 < 100ms")
        let verdict = Self.evaluate([rule], intervals)
        #expect(verdict.thresholds[0].status == .noData)
        #expect(verdict.thresholdsPassed)
    }

    @Test func trendFindsALeakAndNotAFlatLine() throws {
        // 2 hours of 10 s intervals: RSS grows by 50 MB per hour from 100 MB with a little noise; login p99 is flat.
        let intervals = (0..<720).map { index -> IntervalSnapshot in
            let hours = (Double(index) + 0.5) * 10 / 3600
            let noise = Double((index * 7919) % 11) - 5
            return Self.interval(index, loginMs: 100 + UInt64((index * 31) % 3), rss: UInt64(100e6 + 50e6 * hours + noise * 1e5))
        }
        let trend = Threshold(
            quantity: .generatorRSS, comparison: .less, bound: 0.05, unit: .fractionPerHour, isTrend: true,
            text: "trend(generator.rss) < 5%/h")
        // Login p99 is flat with a sawtooth whose fitted slope is a hair above 0: inside its interval, so it passes.
        let flat = Threshold(
            quantity: Self.loginP99, comparison: .less, bound: 0, unit: .fractionPerHour, isTrend: true,
            text: "trend(login.p99) < 0%/h")
        let verdict = Self.evaluate([trend, flat], intervals, loadEnd: 7200)
        #expect((verdict.thresholds[1].value ?? 0) > 0)
        #expect(verdict.thresholds[1].status == .pass)
        let rss = try #require(verdict.findings.first { $0.metric == "generator.rss" })
        #expect(abs(rss.slopePerHour - 50e6) < 0.5e6)
        #expect(rss.significant && rss.driftingUp)
        #expect(rss.slopeLowPerHour > 0 && rss.slopeLowPerHour <= rss.slopePerHour && rss.slopeHighPerHour >= rss.slopePerHour)
        // Mean ≈ 150 MB, so the relative slope is ≈ 33 %/h.
        #expect(abs((rss.relativePerHour ?? 0) - 50.0 / 150) < 0.01)
        let login = try #require(verdict.findings.first { $0.metric == "login.p99" })
        #expect(!login.driftingUp)
        #expect(abs(login.slopePerHour) < 1)
        #expect(verdict.thresholds[0].status == .fail)
        #expect(abs((verdict.thresholds[0].value ?? 0) - 50.0 / 150) < 0.01)
    }

    @Test func leastSquaresSlopeAndInterval() throws {
        // y = 2x + 1 exactly: slope 2, no uncertainty.
        let exact = try #require(TrendLine(points: (0..<10).map { (x: Double($0), y: 2 * Double($0) + 1) }))
        #expect(abs(exact.slope - 2) < 1e-12 && abs(exact.intercept - 1) < 1e-12 && exact.slopeMargin < 1e-9 && exact.isSignificant)
        // Alternating noise around a flat line: slope within its interval of 0.
        let flat = try #require(TrendLine(points: (0..<10).map { (x: Double($0), y: $0 % 2 == 0 ? 1 : -1) }))
        #expect(!flat.isSignificant)
        #expect(TrendLine(points: [(x: 0, y: 1), (x: 1, y: 2)]) == nil)
        #expect(TrendLine(points: [(x: 1, y: 1), (x: 1, y: 2), (x: 1, y: 3)]) == nil)
    }

    @Test func runOutcomes() {
        let unreachable = (0..<3).map { Self.interval($0, logins: 0, errors: 5, errorKind: "connect-refused") }
        #expect(Self.evaluate([], unreachable, stopReason: "completed").outcome.kind == .serverUnreachable)
        let refusedLogins = (0..<3).map { Self.interval($0, logins: 0, errors: 5, errorKind: "sasl-not-authorized") }
        let noLogin = Self.evaluate([], refusedLogins, stopReason: "completed").outcome
        #expect(noLogin.kind == .noSessionLoggedIn && noLogin.failed && noLogin.reason.contains("sasl-not-authorized ×15"))
        let lateStart = [Self.interval(0, logins: 0, errors: 5, errorKind: "connect-refused")] + (1..<3).map { Self.interval($0) }
        #expect(Self.evaluate([], lateStart).outcome.kind == .serverUnreachable)
        let nothing = [Self.interval(0, logins: 0, started: 0)]
        #expect(Self.evaluate([], nothing).outcome.kind == .noSessionStarted)
        let cut = Self.evaluate([], (0..<3).map { Self.interval($0) }, stopReason: "interrupted").outcome
        #expect(cut.kind == .cutShort && !cut.failed)
        #expect(Self.evaluate([], (0..<3).map { Self.interval($0) }, stopReason: "completed").outcome.kind == .ranAsPlanned)
    }

    @Test func monitorFailsOnlyAfterTheWarmupAndNeverOnTrends() {
        var monitor = ThresholdMonitor(
            evaluator: VerdictEvaluator(
                rules: [
                    Threshold(quantity: .errorsCount, comparison: .equal, bound: 0, unit: .count, text: "errors.count == 0"),
                    Threshold(
                        quantity: .generatorRSS, comparison: .less, bound: 0, unit: .fractionPerHour, isTrend: true,
                        text: "trend(generator.rss) < 0%/h"),
                ], warmup: 20))
        var cumulative = IntervalSnapshot()
        var failures: [[String]] = []
        for index in 0..<5 {
            let snapshot = Self.interval(index, errors: index == 0 || index == 3 ? 1 : 0, rss: UInt64(100_000_000 + index * 1_000_000))
            cumulative.accumulate(snapshot)
            failures.append(monitor.observe(interval: snapshot, cumulative: cumulative).map(\.threshold))
        }
        #expect(failures == [[], [], [], ["errors.count == 0"], ["errors.count == 0"]])
    }

    @Test func summaryCarriesTheVerdictAndStopReasonSaysWhy() throws {
        let intervals = (0..<3).map { Self.interval($0, logins: 0, errors: 5, errorKind: "connect-refused") }
        var total = IntervalSnapshot()
        for snapshot in intervals { total.accumulate(snapshot) }
        var summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 30),
            stopReason: "completed", total: total, healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        let verdict = Self.evaluate(
            [Threshold(quantity: .errorsCount, comparison: .equal, bound: 0, unit: .count, text: "errors.count == 0")],
            intervals, stopReason: "completed")
        summary.apply(verdict)
        #expect(summary.stopReason == "server-unreachable")
        let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"verdict\":{") && json.contains("\"thresholds\":[") && json.contains("\"status\":\"fail\""))
        let decoded = try JSONDecoder().decode(RunSummary.self, from: Data(json.utf8))
        #expect(decoded.thresholds == summary.thresholds && decoded.verdict == summary.verdict)
        let text = TextReport.render(summary)
        #expect(text.contains("verdict: server-unreachable") && text.contains("FAIL  errors.count == 0: 15"))
        #expect(VerdictUnit.fractionPerHour.format(207.3) == "+20730 %/h" && VerdictUnit.fraction.format(0.00123) == "0.123 %")
        #expect(VerdictUnit.milliseconds.format(-10539.9) == "-10540 ms")
        // A summary without a verdict (older files) still decodes and renders no verdict section.
        var plain = summary
        plain.thresholds = nil
        plain.findings = nil
        plain.verdict = nil
        let old = try JSONDecoder().decode(RunSummary.self, from: JSONEncoder().encode(plain))
        #expect(old.verdict == nil && !TextReport.render(old).contains("verdict:"))
    }

    @Test func reportOfOneRunKeepsItsVerdict() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("verdict-report-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = ResultsDirectory(path: path)
        try directory.create()
        let intervals = (0..<3).map { Self.interval($0) }
        var lines = Data()
        for snapshot in intervals { lines += try ResultsDirectory.line(for: snapshot) }
        try lines.write(to: URL(fileURLWithPath: directory.file(ResultsDirectory.intervalsFile)))
        var total = IntervalSnapshot()
        for snapshot in intervals { total.accumulate(snapshot) }
        var summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 30),
            stopReason: "completed", total: total, healths: [], peakConcurrent: 100, ledger: LedgerCounts())
        summary.apply(
            Self.evaluate(
                [Threshold(quantity: Self.loginP99, comparison: .less, bound: 50, unit: .milliseconds, text: "login.p99 < 50ms")],
                intervals, stopReason: "completed"))
        try directory.writeSummary(summary)
        let merged = try MergedResults.load(directories: [path])
        #expect(merged.summary.thresholds == summary.thresholds && merged.summary.verdict == summary.verdict)
        #expect(merged.summary.thresholds?.first?.status == .fail)
        let html = HTMLReport.render(merged)
        #expect(html.contains("<h2>Verdict</h2>") && html.contains("login.p99 &lt; 50ms") && html.contains(">fail</b>"))
    }
}
