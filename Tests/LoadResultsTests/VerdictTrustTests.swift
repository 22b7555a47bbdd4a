import Foundation
import Testing

@testable import LoadResults

/// The judgments a user acts on without reading the tables, each where it used to overclaim:
/// a run whose sessions failed after login, an error rate above 100 %, trends from seconds, outages
/// that were the run's own doing.
@Suite struct VerdictTrustTests {
    typealias Tables = VerdictTests

    static func verdict(
        _ intervals: [IntervalSnapshot], rules: [Threshold] = [], stopReason: String = "completed", rampEnd: Double? = nil,
        loadEnd: Double? = nil, planned: PlannedWork = PlannedWork(), segmented: Bool = false, finalLost: UInt64 = 0
    ) -> Verdict {
        var evaluator = VerdictEvaluator(
            rules: rules, loadEnd: loadEnd, rampEnd: rampEnd, planned: planned, segmented: segmented)
        for snapshot in intervals { evaluator.add(snapshot) }
        return evaluator.verdict(stopReason: stopReason, finalLost: finalLost)
    }

    // MARK: - The run's own verdict judges the whole profile

    /// Each row: the sessions' fate and what the verdict must say (kind, exit-1 or not).
    @Test(arguments: [
        // 20 logged in, all 20 failed after login (jabberd2's missing presence echo): not "ran as planned".
        (logins: 20, failed: 20, completed: 0, lost: 0, dropped: 0, kind: RunOutcome.Kind.noSessionCompleted, fails: true),
        // login.yaml on a half-broken server: 10 logged in, 10 failed, none completed.
        (logins: 10, failed: 10, completed: 0, lost: 0, dropped: 0, kind: .noSessionCompleted, fails: true),
        // Partial failure: the run worked, thresholds decide its exit.
        (logins: 20, failed: 3, completed: 17, lost: 0, dropped: 0, kind: .sessionsFailed, fails: false),
        (logins: 20, failed: 0, completed: 20, lost: 4, dropped: 0, kind: .messagesLost, fails: false),
        (logins: 20, failed: 0, completed: 20, lost: 0, dropped: 2, kind: .arrivalsDropped, fails: false),
        (logins: 20, failed: 0, completed: 20, lost: 0, dropped: 0, kind: .ranAsPlanned, fails: false),
    ])
    func outcomeJudgesTheWholeProfile(
        row: (logins: UInt64, failed: UInt64, completed: UInt64, lost: UInt64, dropped: UInt64, kind: RunOutcome.Kind, fails: Bool)
    ) throws {
        let interval = Tables.interval(
            0, logins: row.logins, errors: row.failed, errorKind: "timeout-presence", sent: 200, lost: row.lost, started: row.logins,
            failed: row.failed, completed: row.completed, dropped: row.dropped)
        let outcome = Self.verdict([interval], planned: PlannedWork(sessions: 20, messages: 200)).outcome
        #expect(outcome.kind == row.kind)
        #expect(outcome.failed == row.fails)
        let work = try #require(outcome.work)
        #expect(work.sessionsPlanned == 20 && work.messagesPlanned == 200)
        #expect(work.sessionsLoggedIn == row.logins && work.sessionsFailed == row.failed && work.sessionsCompleted == row.completed)
        if row.failed > 0 {
            #expect(outcome.reason.contains("timeout-presence ×\(row.failed)"))
            #expect(work.line.contains("errors: timeout-presence ×\(row.failed)"))
        }
    }

    @Test func theWorkLineSaysPlannedAgainstDone() {
        let interval = Tables.interval(0, logins: 20, errors: 20, errorKind: "timeout-presence", started: 20, failed: 20, completed: 0)
        let outcome = Self.verdict([interval], planned: PlannedWork(sessions: 20, messages: 200)).outcome
        #expect(outcome.reason == "no session completed its profile: 20 of 20 logged in, 20 failed (timeout-presence ×20)")
        #expect(
            outcome.work?.line
                == "sessions: 20 planned, 20 started, 20 logged in, 0 completed, 20 failed; messages: 200 planned, 0 sent, 0 received, 0 lost; errors: timeout-presence ×20"
        )
    }

    @Test func oneSegmentOfSeveralDoesNotJudgeLossAlone() {
        // Its messages went to other generators' sessions: only `report` over every segment can tell.
        let interval = Tables.interval(0, logins: 10, sent: 100, lost: 100, started: 10)
        let outcome = Self.verdict([interval], segmented: true).outcome
        #expect(outcome.kind == .ranAsPlanned)
        #expect(outcome.work?.messagesLost == nil)
        #expect(outcome.work?.line.contains("loss judged by `report`") == true)
    }

    /// One generator of several counts other generators' deliveries as lost: its loss rules are
    /// left to `report` (no-data with the reason), while its other rules are judged as usual.
    @Test func oneGeneratorOfSeveralLeavesLossRulesToReport() {
        let interval = Tables.interval(0, logins: 10, sent: 100, lost: 60, started: 10)
        let rules = [
            Threshold(quantity: .messagesLost, comparison: .equal, bound: 0, unit: .count, text: "messages.lost == 0"),
            Threshold(quantity: .messagesLoss, comparison: .less, bound: 0.01, unit: .fraction, text: "messages.loss < 1%"),
            Threshold(quantity: .sessionsFailed, comparison: .equal, bound: 0, unit: .count, text: "sessions.failed == 0"),
        ]
        let several = Self.verdict([interval], rules: rules, segmented: true)
        #expect(several.thresholds.map(\.status) == [.noData, .noData, .pass])
        #expect(several.thresholds[0].note == VerdictEvaluator.lossElsewhereNote)
        #expect(several.thresholdsPassed)
        let alone = Self.verdict([interval], rules: rules)
        #expect(alone.thresholds.map(\.status) == [.fail, .fail, .pass])
    }

    @Test func anInterruptedRunIsCutShortEvenWhenSessionsFailed() {
        let interval = Tables.interval(0, logins: 10, errors: 10, started: 10, failed: 10, completed: 0)
        #expect(Self.verdict([interval], stopReason: "interrupted").outcome.kind == .cutShort)
    }

    @Test func theSummaryCarriesTheWorkAndStopReasonSaysNoSessionCompleted() throws {
        let interval = Tables.interval(0, logins: 20, errors: 20, errorKind: "timeout-presence", started: 20, failed: 20, completed: 0)
        var summary = RunSummary(
            runID: "r", profile: "chat", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 10),
            stopReason: "completed", total: interval, healths: [], peakConcurrent: 20, ledger: LedgerCounts())
        summary.apply(Self.verdict([interval]))
        #expect(summary.stopReason == "no-session-completed")
        let text = TextReport.render(summary)
        #expect(text.contains("verdict: no-session-completed"))
        #expect(text.contains("sessions: 20 started, 20 logged in, 0 completed, 20 failed"))
        let decoded = try JSONDecoder().decode(RunSummary.self, from: JSONEncoder().encode(summary))
        #expect(decoded.verdict == summary.verdict)
    }

    // MARK: - Rates are proportions

    @Test(arguments: [
        // 286 errors over 100 sessions used to read 286 %: errors are not sessions.
        (started: UInt64(100), failed: UInt64(40), errors: UInt64(286), rate: 0.4),
        (started: 100, failed: 0, errors: 12, rate: 0.0),
        (started: 0, failed: 0, errors: 0, rate: 0.0),
        (started: 0, failed: 3, errors: 3, rate: 1.0),
        (started: 10, failed: 30, errors: 30, rate: 1.0),
    ])
    func errorRateIsSessionsFailedOverSessionsStarted(row: (started: UInt64, failed: UInt64, errors: UInt64, rate: Double)) {
        #expect(ErrorRate.proportion(failed: row.failed, started: row.started) == row.rate)
        var interval = Tables.interval(0, logins: row.started, errors: row.errors, started: row.started, failed: row.failed)
        interval.gauges["sessions_online"] = 0
        let summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 10),
            stopReason: "completed", total: interval, healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        #expect(summary.errorRate == row.rate)
        let rule = Threshold(quantity: .errorsRate, comparison: .less, bound: 0.5, unit: .fraction, text: "errors.rate < 50%")
        let judged = Self.verdict([interval], rules: [rule]).thresholds[0]
        #expect(judged.value == row.rate)
        #expect((judged.value ?? 0) <= 1)
    }

    // MARK: - Trends only where they can be judged

    @Test func aNinetySecondRunJudgesNoTrend() throws {
        // The demo's ramp: login p99 and RSS grow for 90 s. Projected to an hour that was "+44574 %/h".
        let intervals = (0..<18).map { index in
            Tables.interval(index, loginMs: 10 + UInt64(index) * 200, rss: UInt64(50_000_000 + index * 5_000_000), seconds: 5)
        }
        let trend = Threshold(
            quantity: .generatorRSS, comparison: .less, bound: 0.02, unit: .fractionPerHour, isTrend: true, text: "trend(generator.rss) < 2%/h")
        let verdict = Self.verdict(intervals, rules: [trend], loadEnd: 90)
        #expect(verdict.findings.isEmpty)
        let note = try #require(verdict.trendsNote)
        #expect(note.hasPrefix("too short to judge trends"))
        #expect(verdict.thresholds[0].status == .noData && verdict.thresholds[0].note == note)
        var summary = RunSummary(
            runID: "r", profile: "p", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 90),
            stopReason: "duration", total: intervals[0], healths: [], peakConcurrent: 0, ledger: LedgerCounts())
        summary.apply(verdict)
        let text = TextReport.render(summary)
        #expect(text.contains("trends: too short to judge trends") && !text.contains("drifts"))
    }

    @Test func theRampIsNotATrend() {
        // 30 min at 10 s intervals; RSS climbs for the first 10 min (the ramp), then is flat.
        let intervals = (0..<180).map { index in
            Tables.interval(index, rss: UInt64(100_000_000 + min(index, 60) * 1_000_000 + (index % 3) * 10_000))
        }
        let withRamp = Self.verdict(intervals, loadEnd: 1800)
        let unmarked = withRamp.findings.first { $0.metric == "generator.rss" }
        #expect(unmarked?.driftingUp == true)  // without knowing the ramp, its growth reads as a drift
        let judged = Self.verdict(intervals, rampEnd: 600, loadEnd: 1800)
        #expect(judged.trendsNote == nil)
        let rss = judged.findings.first { $0.metric == "generator.rss" }
        #expect(rss != nil && rss?.driftingUp == false)
    }

    @Test func tenMinutesInTwentyIntervalsIsTheMinimum() {
        let longEnough = (0..<20).map { Tables.interval($0, seconds: 30) }  // 600 s in 20 intervals
        #expect(Self.verdict(longEnough, loadEnd: 600).trendsNote == nil)
        let fewIntervals = (0..<19).map { Tables.interval($0, seconds: 60) }  // 1140 s in 19
        #expect(Self.verdict(fewIntervals, loadEnd: 1140).trendsNote != nil)
        let shortSpan = (0..<50).map { Tables.interval($0, seconds: 10) }  // 500 s in 50
        #expect(Self.verdict(shortSpan, loadEnd: 500).trendsNote != nil)
    }

    // MARK: - What the server did not do is said

    @Test func serverNoticesSayWhatTheServerSkipped() throws {
        var interval = Tables.interval(0, logins: 10, started: 10)
        interval.counters[Counter.pingsUnsupported.name] = 10
        interval.counters[Counter.presenceEchoMissing.name] = 10
        interval.counters[Counter.streamManagementNotOffered.name] = 4
        let summary = RunSummary(
            runID: "r", profile: "idle", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 10),
            stopReason: "completed", total: interval, healths: [], peakConcurrent: 10, ledger: LedgerCounts())
        let notices = try #require(summary.notices)
        #expect(notices.map(\.kind) == ["presence-not-echoed", "pings-unsupported", "stream-management-not-offered"])
        #expect(notices.map(\.count) == [10, 10, 4])
        #expect(notices[1].text.contains("not counted as round trips"))
        let text = TextReport.render(summary)
        #expect(text.contains("server notices") && text.contains("pings-unsupported ×10"))
        let decoded = try JSONDecoder().decode(RunSummary.self, from: JSONEncoder().encode(summary))
        #expect(decoded.notices == summary.notices)
        // A server that did everything asked: no notices at all.
        let quiet = RunSummary(
            runID: "r", profile: "idle", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 10),
            stopReason: "completed", total: Tables.interval(0), healths: [], peakConcurrent: 10, ledger: LedgerCounts())
        #expect(quiet.notices == nil && !TextReport.render(quiet).contains("server notices"))
    }
}
