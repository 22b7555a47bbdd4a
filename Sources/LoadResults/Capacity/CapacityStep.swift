// One step of a capacity search judged from its own intervals: load asked and achieved, each
// rule's value, and the outcome the search takes (pass, fail, collapse, generator-limited).

/// The dimension a capacity search varies, from the profile's load model.
public enum CapacityDimension: String, Sendable, Equatable, Codable {
    /// Open model: new sessions (logins) per second.
    case arrivalRate = "arrival-rate"
    /// Closed model: sessions online at once.
    case sessions

    /// `52 logins/s`, `1200 sessions`.
    public func format(_ load: Double) -> String {
        switch self {
        case .arrivalRate: return "\(CapacityStep.number(load)) logins/s"
        case .sessions: return "\(Int(load.rounded())) sessions"
        }
    }

    /// `52/s`, `1200`: the short form for tables.
    public func short(_ load: Double) -> String {
        switch self {
        case .arrivalRate: return "\(CapacityStep.number(load))/s"
        case .sessions: return "\(Int(load.rounded()))"
        }
    }
}

/// One step of a capacity search, judged on its own histograms after its warm-up.
///
/// Units: `asked` and `achieved` in the dimension's unit (logins/s started, or mean sessions online
/// at the judged intervals' ends); `loginsPerSecond` and `messagesPerSecond` are completed logins
/// and received messages per second over the judged time; `errorRate` is a fraction (0.5 = 50 %).
public struct CapacityStep: Sendable, Equatable, Codable {
    /// 1-based position in the search.
    public var index: Int
    public var purpose: CapacitySearch.Purpose
    public var asked: Double
    public var achieved: Double
    public var loginsPerSecond: Double
    public var messagesPerSecond: Double
    public var errorRate: Double
    /// Seconds judged (after the warm-up, before the load's end).
    public var judgedSeconds: Double
    public var rules: [ThresholdResult]
    public var outcome: CapacitySearch.Outcome
    /// Why the step collapsed or was refused, or nil.
    public var reason: String?
    /// The step was stopped before its planned end (a collapse).
    public var cutShort: Bool
    /// Judged intervals in which the generator saturated, and arrivals it dropped.
    public var saturatedIntervals: Int
    public var droppedArrivals: UInt64
    /// The step's results directory, relative to the search's.
    public var directory: String
    /// How the step started: on a settled server or not, after how long (`StepSettling`); nil in
    /// files written before it was recorded, and for the merged steps of `report`.
    public var start: StepStartState? = nil
    /// Who limited the step's run (its summary's `limit`: the generator, the server it monitored,
    /// neither, or unknown); nil in older files.
    public var limit: LimitAttribution? = nil

    enum CodingKeys: String, CodingKey {
        case index = "step"
        case purpose, asked, achieved
        case loginsPerSecond = "logins_per_s"
        case messagesPerSecond = "messages_per_s"
        case errorRate = "error_rate"
        case judgedSeconds = "judged_s"
        case rules, outcome, reason
        case cutShort = "cut_short"
        case saturatedIntervals = "saturated_intervals"
        case droppedArrivals = "dropped_arrivals"
        case directory, start, limit
    }

    /// The rule that failed by the widest margin (value ÷ bound for `<`, bound ÷ value for `>`), or nil.
    public func limitingRule(_ rules: [Threshold]) -> (rule: Threshold, result: ThresholdResult)? {
        var worst: (Threshold, ThresholdResult, Double)?
        for (rule, result) in zip(rules, self.rules) where result.status != .pass {
            let margin = result.value.map { CapacityJudge.excess(rule, $0) } ?? .infinity
            if worst == nil || margin > worst!.2 { worst = (rule, result, margin) }
        }
        return worst.map { ($0.0, $0.1) }
    }

    /// `52`, `32.5`, `7.25`: a load or rate as tables show it (whole numbers without decimals).
    public static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e9 { return String(Int(value)) }
        return value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}

/// Judges a capacity step from its intervals. Pure: plain values in, a `CapacityStep` out.
///
/// - Rules are judged by `VerdictEvaluator` over the step's intervals after `warmup` whose midpoint
///   is before `loadEnd` (as `run` judges thresholds), so each step has its own histograms.
///   A rule with no data fails (the step could not show it holds); in a closed step, whose
///   sessions log in during the warm-up (the ramp), such a rule is first judged over the whole step.
/// - **Generator-limited** (checked first): a third or more of the judged intervals saturated
///   (`GeneratorHealth.saturated`), or the generator dropped more than 2 % of the arrivals it was
///   asked for in the judged time (its session cap, or every account of `--accounts` in use).
/// - **Collapse**: more than half of the sessions that could fail did (`collapseErrorRate`).
///   **Overload**: a latency rule's value is more than `collapseFactor` (5) times its bound.
/// - A step cut short (`cutAt`, seconds since its start) is judged up to the cut only.
/// - Else pass when every rule passed, fail otherwise.
public enum CapacityJudge {
    public static let collapseErrorRate = 0.5
    public static let collapseFactor = 5.0
    public static let saturatedShare = 1.0 / 3
    public static let droppedShare = 0.02
    /// The error kind of an arrival dropped because every account was in use (LoadEngine's `ArrivalDrop`).
    static let noFreeAccountKind = "dropped-no-free-account"

    /// The whole step, once it ended.
    public static func judge(
        intervals: [IntervalSnapshot], rules: [Threshold], dimension: CapacityDimension, asked: Double,
        warmup: Double, loadEnd plannedEnd: Double, index: Int, purpose: CapacitySearch.Purpose, cutAt: Double? = nil, directory: String
    ) -> CapacityStep {
        let loadEnd = min(plannedEnd, cutAt ?? plannedEnd)
        let cutShort = cutAt != nil
        var evaluator = VerdictEvaluator(
            rules: rules, warmup: warmup, loadEnd: loadEnd, targetSessions: dimension == .sessions ? Int(asked.rounded()) : nil)
        for interval in intervals { evaluator.add(interval) }
        var results = evaluator.results(final: true)
        if dimension == .sessions && results.contains(where: { $0.status == .noData }) {
            // A closed step logs its sessions in during the warm-up (its ramp): a rule the hold has
            // no sample of (login latency) is judged over the whole step.
            var whole = VerdictEvaluator(rules: rules, warmup: 0, loadEnd: loadEnd, targetSessions: Int(asked.rounded()))
            for interval in intervals { whole.add(interval) }
            for (index, result) in whole.results(final: true).enumerated() where results[index].status == .noData && result.status != .noData {
                results[index] = result
                results[index].note = "no sample after the warm-up: judged over the whole step (the ramp included)"
            }
        }
        for index in results.indices where results[index].status == .noData {
            results[index].status = .fail
            results[index].note = (results[index].note.map { $0 + "; " } ?? "") + "no data counts as a fail in a capacity step"
        }
        let judged = judgedIntervals(intervals, warmup: warmup, loadEnd: loadEnd)
        var span = VerdictSpan()
        var onlineBefore: Int64 = 0
        var onlineSum = 0.0
        for interval in intervals {
            if judged.contains(where: { $0.start == interval.start }) {
                span.add(interval, duringLoad: true, onlineBefore: onlineBefore)
                onlineSum += Double(interval.gauge("sessions_online"))
            }
            onlineBefore = interval.gauge("sessions_online")
        }
        let seconds = span.seconds
        let total = span.total
        let achieved: Double
        switch dimension {
        case .arrivalRate: achieved = seconds > 0 ? Double(total.counter(.sessionsStarted)) / seconds : 0
        case .sessions: achieved = judged.isEmpty ? 0 : onlineSum / Double(judged.count)
        }
        let errorRate = span.isEmpty ? 0 : span.value(of: .errorsRate, targetSessions: nil).value ?? 0
        let saturated = judged.filter { $0.health?.saturated == true }.count
        let dropped = total.counter(.droppedArrivals)
        var step = CapacityStep(
            index: index, purpose: purpose, asked: asked, achieved: achieved,
            loginsPerSecond: seconds > 0 ? Double(total.counter(.sessionsLoggedIn)) / seconds : 0,
            messagesPerSecond: seconds > 0 ? Double(total.counter(.messagesReceived)) / seconds : 0,
            errorRate: errorRate, judgedSeconds: seconds, rules: results, outcome: .pass, reason: nil, cutShort: cutShort,
            saturatedIntervals: saturated, droppedArrivals: dropped, directory: directory)
        let askedArrivals = dimension == .arrivalRate ? asked * seconds : asked
        if !judged.isEmpty && Double(saturated) >= saturatedShare * Double(judged.count) {
            step.outcome = .generatorLimited
            step.reason =
                "the generator saturated in \(saturated) of \(judged.count) judged intervals (loop lag p99 > \(Int(GeneratorHealth.lagLimitMilliseconds)) ms or CPU > \(Int(GeneratorHealth.cpuLimitFraction * 100)) %)"
        } else if Double(dropped) > droppedShare * askedArrivals {
            step.outcome = .generatorLimited
            let noAccount = total.errors[noFreeAccountKind] ?? 0
            step.reason =
                noAccount * 2 > dropped
                ? "every account was in use: \(noAccount) arrivals found no free account (give more --accounts; achieved \(dimension.short(achieved)) of \(dimension.short(asked)))"
                : "the generator dropped \(dropped) arrivals it could not start (achieved \(dimension.short(achieved)) of \(dimension.short(asked)))"
        } else if let collapse = collapseReason(results: results, rules: rules, errorRate: errorRate) {
            step.outcome = collapse.outcome
            step.reason = collapse.reason
        } else if results.contains(where: { $0.status != .pass }) {
            step.outcome = .fail
        }
        if judged.isEmpty && step.outcome == .pass {
            step.outcome = .fail
            step.reason = "no interval after the warm-up to judge"
        }
        return step
    }

    /// Whether one interval after the warm-up shows a collapse or an overload (the step is then
    /// cut short), with the reason.
    public static func collapse(
        in interval: IntervalSnapshot, onlineBefore: Int64, rules: [Threshold]
    ) -> (outcome: CapacitySearch.Outcome, reason: String)? {
        var span = VerdictSpan()
        span.add(interval, duringLoad: true, onlineBefore: onlineBefore)
        let results = rules.map { rule -> ThresholdResult in
            let value = rule.isTrend ? nil : span.value(of: rule.quantity, rule: rule.unit, targetSessions: nil).value
            return ThresholdResult(
                threshold: rule.text, status: value.map { rule.passes($0) ? .pass : .fail } ?? .noData, value: value, unit: rule.unit,
                worstWindow: nil, windows: nil, note: nil)
        }
        let exposed = UInt64(max(0, onlineBefore)) + interval.counter(.sessionsStarted)
        // A handful of sessions is no collapse.
        let errorRate = exposed >= 5 ? span.value(of: .errorsRate, targetSessions: nil).value ?? 0 : 0
        return collapseReason(results: results, rules: rules, errorRate: errorRate)
    }

    static func collapseReason(
        results: [ThresholdResult], rules: [Threshold], errorRate: Double
    ) -> (outcome: CapacitySearch.Outcome, reason: String)? {
        if errorRate > collapseErrorRate {
            return (.collapse, "\(VerdictUnit.fraction.format(errorRate)) of the sessions failed (more than \(Int(collapseErrorRate * 100)) %)")
        }
        for (rule, result) in zip(rules, results) {
            guard case .latency(_, let statistic) = rule.quantity, statistic.percentile != nil, let value = result.value, rule.bound > 0 else {
                continue
            }
            if excess(rule, value) > collapseFactor {
                return (
                    .overload,
                    "\(rule.quantity) \(VerdictUnit.milliseconds.format(value)) is more than \(Int(collapseFactor))× its limit \(VerdictUnit.milliseconds.format(rule.bound))"
                )
            }
        }
        return nil
    }

    /// How far `value` is from the bound, as a ratio (> 1 fails): value ÷ bound for `<`, bound ÷ value for `>`.
    static func excess(_ rule: Threshold, _ value: Double) -> Double {
        switch rule.comparison {
        case .less, .lessOrEqual: return rule.bound > 0 ? value / rule.bound : (value > 0 ? .infinity : 0)
        case .greater, .greaterOrEqual: return value > 0 ? rule.bound / value : .infinity
        case .equal, .notEqual: return rule.passes(value) ? 0 : .infinity
        }
    }

    /// Intervals that start after the warm-up and whose midpoint is before the load's end.
    static func judgedIntervals(_ intervals: [IntervalSnapshot], warmup: Double, loadEnd: Double) -> [IntervalSnapshot] {
        intervals.filter { $0.start >= warmup - 1e-6 && ($0.start + $0.end) / 2 < loadEnd }
    }
}
