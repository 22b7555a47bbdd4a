// Every comparison and quantity the threshold grammar accepts reaches the verdict as parsed: the
// parser produces LoadResults' one `Threshold`, so there is no mapping to lose a case in.
import LoadResults
import Testing

@testable import LoadProfile

@Suite struct ThresholdToVerdictTests {
    /// One 10 s interval with 3 errors, 10 logins of 100 ms, 100 online, 100 MB resident and 20 % CPU.
    static func interval() -> IntervalSnapshot {
        var snapshot = IntervalSnapshot(start: 0, end: 10)
        snapshot.counters[Counter.sessionsStarted.name] = 13
        snapshot.counters[Counter.sessionsLoggedIn.name] = 10
        snapshot.counters[Counter.sessionsFailed.name] = 3
        snapshot.counters[Counter.sessionsCompleted.name] = 10
        var histogram = LatencyHistogram()
        histogram.record(microseconds: 100_000, count: 10)
        snapshot.latency["login"] = histogram
        snapshot.errors["timeout-login"] = 3
        snapshot.gauges["sessions_online"] = 100
        snapshot.health = GeneratorHealth(
            cpuPercent: 20, cpuSeconds: 2, rssBytes: 100_000_000, openFileDescriptors: 50,
            loopLagP99Milliseconds: 1, loopLagMaxMilliseconds: 2, cores: 2)
        return snapshot
    }

    static func judge(_ threshold: Threshold) -> (rule: Threshold, result: ThresholdResult) {
        var evaluator = VerdictEvaluator(rules: [threshold], loadEnd: 10, targetSessions: 100)
        evaluator.add(interval())
        return (evaluator.rules[0], evaluator.verdict(stopReason: "duration").thresholds[0])
    }

    /// `errors.count OP 3` with a run of exactly 3 errors: each operator is judged as written.
    @Test(arguments: ThresholdComparison.allCases)
    func everyComparisonIsJudgedAsWritten(_ comparison: ThresholdComparison) throws {
        let parsed = try Threshold.parse("errors.count \(comparison.rawValue) 3")
        #expect(parsed.comparison == comparison)
        let (rule, result) = Self.judge(parsed)
        #expect(rule == parsed)
        #expect(result.value == 3)
        #expect(result.status == (comparison.holds(3, 3) ? .pass : .fail))
    }

    /// Every named quantity and every latency statistic, as the grammar writes them, reaches the
    /// evaluator unchanged and is judged under its own name.
    static let texts: [String] =
        ThresholdQuantity.named.map { named in
            switch named.quantity.allowedUnits[0] {
            case .fraction where named.quantity == .sessionsOnline: return "\(named.name) >= 50%"
            case .fraction: return "\(named.name) < 50%"
            case .bytes: return "\(named.name) < 1GB"
            default: return "\(named.name) >= 0"
            }
        }
        + LatencyStatistic.allCases.map { statistic in
            switch statistic {
            case .count: return "login.count >= 10"
            case .rate: return "login.rate >= 1/s"
            default: return "login.\(statistic.rawValue) <= 200ms"
            }
        }
        + ["trend(login.p99) < 5%/h", "errors.rate < 50% over 10s"]

    @Test(arguments: texts)
    func everyQuantityReachesTheVerdictUnchanged(_ text: String) throws {
        let parsed = try Threshold.parse(text)
        let (rule, result) = Self.judge(parsed)
        #expect(rule == parsed)
        #expect(result.threshold == text)
        #expect(result.unit == parsed.unit)
        #expect(text.hasPrefix(parsed.isTrend ? "trend(\(parsed.quantity))" : parsed.quantity.description))
        if !parsed.isTrend {
            // Every quantity has a value in this interval and passes its generous bound.
            #expect(result.value != nil, "\(text): \(result.note ?? "")")
            #expect(result.status == .pass, "\(text): \(result.value.map(parsed.unit.format) ?? "no value")")
        }
    }
}
