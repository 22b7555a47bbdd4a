/// Judges a run's thresholds and trends from its interval snapshots, fed one at a time (live, for
/// `--abort-on-fail`, or from `intervals.jsonl`). Pure: no clock, no I/O.
///
/// Rules (docs/RESULTS.md, "Verdict"):
/// - An interval is judged when it starts at or after the warm-up (`warmup`, seconds since start).
/// - Whole-run rules use every judged interval added up; `over W` rules cut the judged time into
///   consecutive windows of W (the last, shorter one is judged only if no full window exists) and
///   report the worst; every window must pass.
/// - `sessions.online` and trends use judged intervals whose midpoint is before the load's end
///   (`loadEnd`; without one, every interval but the last), so the final log-out does not count.
/// - Trends: least-squares slope of per-interval values against time in hours (`TrendLine`), over
///   intervals after the warm-up and the ramp (`rampEnd`) and before the load's end — and only when
///   those span at least `TrendPolicy.minimumSeconds` in at least `TrendPolicy.minimumIntervals`
///   intervals. Below that nothing is judged: no finding, trend rules `no-data`, `trendsNote` says why.
/// Memory: one accumulated snapshot per distinct window length plus a few numbers per interval.
public struct VerdictEvaluator: Sendable {
    public let rules: [Threshold]
    public let warmup: Double
    public let loadEnd: Double?
    public let targetSessions: Int?
    /// Seconds since the start when the ramp ended (nil: no ramp); trends start after it.
    public let rampEnd: Double?
    /// What the plan asks of this generator, for the outcome's planned-against-done.
    public let planned: PlannedWork
    /// One generator of several (`--segment i/N`, or a `--run-id` shared with others): its messages
    /// to other generators' sessions cannot be judged lost here, so loss (the outcome's and the
    /// `messages.lost` / `messages.loss` rules') is left to `xmppload report` over all of them.
    public let segmented: Bool

    /// Per-interval values for the trend findings and trend rules.
    struct TrendPoint: Sendable {
        var hours: Double
        /// The interval's bounds, seconds since the start.
        var start: Double
        var end: Double
        var values: [ThresholdQuantity: Double]
    }

    struct WindowState: Sendable {
        var span = VerdictSpan()
        /// Per rule index: the worst window so far and how many windows were judged.
        var worst: [Int: ThresholdResult.Window] = [:]
        var judged = 0
    }

    /// The measures of the trend findings, with their units.
    public static let findingMeasures: [(ThresholdQuantity, VerdictUnit)] = [
        (.latency(metric: "login", statistic: .p99), .milliseconds),
        (.latency(metric: "message", statistic: .p99), .milliseconds),
        (.errorsRate, .fraction),
        (.generatorRSS, .bytes),
    ]

    private var whole = VerdictSpan()
    private var everything = VerdictSpan()
    private var windows: [Double: WindowState] = [:]
    private var points: [TrendPoint] = []
    private var pendingOnline: (interval: IntervalSnapshot, onlineBefore: Int64)?
    /// `sessions_online` at the end of the last interval added.
    private var lastOnline: Int64 = 0
    private var firstActivity: IntervalSnapshot?
    private let trendMeasures: [ThresholdQuantity]

    public init(
        rules: [Threshold], warmup: Double = 0, loadEnd: Double? = nil, targetSessions: Int? = nil, rampEnd: Double? = nil,
        planned: PlannedWork = PlannedWork(), segmented: Bool = false
    ) {
        self.rules = rules
        self.warmup = warmup
        self.loadEnd = loadEnd
        self.targetSessions = targetSessions
        self.rampEnd = rampEnd
        self.planned = planned
        self.segmented = segmented
        var measures = Self.findingMeasures.map(\.0)
        for rule in rules where rule.isTrend && !measures.contains(rule.quantity) { measures.append(rule.quantity) }
        trendMeasures = measures
        for rule in rules { if let length = rule.window { windows[length] = WindowState() } }
    }

    /// Adds the next interval (in time order).
    public mutating func add(_ interval: IntervalSnapshot) {
        let onlineBefore = lastOnline
        lastOnline = interval.gauge("sessions_online")
        everything.add(interval, duringLoad: false, onlineBefore: onlineBefore)
        if firstActivity == nil && (interval.counter(.sessionsLoggedIn) > 0 || interval.errorCount > 0) { firstActivity = interval }
        guard interval.start >= warmup - 1e-6 else { return }
        let duringLoad: Bool
        if let loadEnd {
            duringLoad = (interval.start + interval.end) / 2 < loadEnd
        } else {
            // Unknown end: an interval counts once another follows it.
            if let pending = pendingOnline { commitLoadInterval(pending.interval, onlineBefore: pending.onlineBefore) }
            pendingOnline = (interval, onlineBefore)
            duringLoad = false
        }
        whole.add(interval, duringLoad: duringLoad, onlineBefore: onlineBefore)
        if duringLoad && afterRamp(interval) { points.append(point(for: interval, onlineBefore: onlineBefore)) }
        for (length, var state) in windows {
            state.span.add(interval, duringLoad: duringLoad, onlineBefore: onlineBefore)
            if state.span.end - (state.span.start ?? 0) >= length - 1e-6 {
                judgeWindow(&state, length: length)
            }
            windows[length] = state
        }
    }

    private mutating func commitLoadInterval(_ interval: IntervalSnapshot, onlineBefore: Int64) {
        let online = interval.gauge("sessions_online")
        whole.minimumOnline = min(whole.minimumOnline ?? online, online)
        if afterRamp(interval) { points.append(point(for: interval, onlineBefore: onlineBefore)) }
        for (length, var state) in windows where state.span.start.map({ interval.start >= $0 - 1e-6 }) ?? false {
            state.span.minimumOnline = min(state.span.minimumOnline ?? online, online)
            windows[length] = state
        }
    }

    private func afterRamp(_ interval: IntervalSnapshot) -> Bool {
        guard let rampEnd else { return true }
        return interval.start >= rampEnd - 1e-6
    }

    private func point(for interval: IntervalSnapshot, onlineBefore: Int64) -> TrendPoint {
        var span = VerdictSpan()
        span.add(interval, duringLoad: true, onlineBefore: onlineBefore)
        var values: [ThresholdQuantity: Double] = [:]
        for measure in trendMeasures {
            if let value = span.value(of: measure, rule: nil, targetSessions: targetSessions).value { values[measure] = value }
        }
        return TrendPoint(hours: (interval.start + interval.end) / 2 / 3600, start: interval.start, end: interval.end, values: values)
    }

    private func judgeWindow(_ state: inout WindowState, length: Double) {
        state.judged += 1
        for (index, rule) in rules.enumerated() where rule.window == length {
            guard let value = state.span.value(of: rule.quantity, rule: rule.unit, targetSessions: targetSessions).value else { continue }
            let window = ThresholdResult.Window(start: state.span.start ?? 0, end: state.span.end, value: value)
            if let worst = state.worst[index], rule.comparison.worse(worst.value, value, bound: rule.bound) == worst.value {
                continue
            }
            state.worst[index] = window
        }
        state.span = VerdictSpan()
    }

    // MARK: - Results

    /// Every rule's result so far. `final`: the run is over (judge a lone partial window, and add
    /// `finalLost`, the losses only the end of the run revealed, to `messages.lost`/`loss`).
    public func results(final: Bool, finalLost: UInt64 = 0) -> [ThresholdResult] {
        rules.enumerated().map { index, rule in result(index: index, rule: rule, final: final, finalLost: finalLost) }
    }

    /// Why a loss rule is not judged by one generator of several.
    public static let lossElsewhereNote =
        "one generator of several (--segment or a shared --run-id): loss is judged over all of them by `xmppload report DIR…`"

    private func result(index: Int, rule: Threshold, final: Bool, finalLost: UInt64) -> ThresholdResult {
        var result = ThresholdResult(
            threshold: rule.text, status: .noData, value: nil, unit: rule.unit, worstWindow: nil,
            windows: nil, note: nil)
        if segmented && (rule.quantity == .messagesLost || rule.quantity == .messagesLoss) {
            result.note = Self.lossElsewhereNote
            return result
        }
        if rule.isTrend {
            if let short = trendsNote {
                result.note = short
                return result
            }
            guard let line = trendLine(rule.quantity) else {
                result.note = "fewer than 3 intervals measured it after the warm-up and ramp"
                return result
            }
            guard let relative = line.relativeSlope else {
                result.note = "the mean is 0"
                return result
            }
            // Judged on the 95 % confidence interval, so noise does not fail a soak: `<` fails only
            // when even the interval's low end breaks the bound, `>` when even its high end does.
            let low = (line.slope - line.slopeMargin) / abs(line.meanY)
            let high = (line.slope + line.slopeMargin) / abs(line.meanY)
            let judged: Double
            switch rule.comparison {
            case .less, .lessOrEqual: judged = low
            case .greater, .greaterOrEqual: judged = high
            case .equal, .notEqual: judged = relative
            }
            result.value = relative
            result.status = rule.passes(judged) ? .pass : .fail
            result.note =
                "95 % CI \(VerdictUnit.fractionPerHour.format(low)) … \(VerdictUnit.fractionPerHour.format(high)) over \(line.count) intervals"
            return result
        }
        if let length = rule.window, var state = windows[length] {
            var worst = state.worst[index]
            var judged = state.judged
            if final && judged == 0 && !state.span.isEmpty {
                judgeWindow(&state, length: length)
                worst = state.worst[index]
                judged = state.judged
                result.note = "the judged time was shorter than one window"
            }
            result.windows = judged
            guard let worst else {
                result.note = judged == 0 ? "no complete window after the warm-up yet" : "no samples in any window"
                return result
            }
            result.worstWindow = worst
            result.value = worst.value
            result.status = rule.passes(worst.value) ? .pass : .fail
            return result
        }
        let measured = whole.value(
            of: rule.quantity, rule: rule.unit, targetSessions: targetSessions,
            extraLost: final ? finalLost : 0)
        result.value = measured.value
        result.note = measured.note
        if let value = measured.value { result.status = rule.passes(value) ? .pass : .fail }
        return result
    }

    private func trendLine(_ measure: ThresholdQuantity) -> TrendLine? {
        TrendLine(points: points.compactMap { point in point.values[measure].map { (x: point.hours, y: $0) } })
    }

    /// Why trends are not judged (the span after the warm-up and ramp is too short), or nil when
    /// they are: "too short to judge trends: 75 s in 15 intervals after the warm-up and ramp (needs
    /// 10 min in 20 intervals)".
    public var trendsNote: String? {
        let span = points.isEmpty ? 0 : points[points.count - 1].end - points[0].start
        guard span < TrendPolicy.minimumSeconds - 1e-6 || points.count < TrendPolicy.minimumIntervals else { return nil }
        return
            "too short to judge trends: \(Int(span.rounded())) s in \(points.count) interval\(points.count == 1 ? "" : "s") after the warm-up and ramp "
            + "(needs \(Int(TrendPolicy.minimumSeconds / 60)) min in \(TrendPolicy.minimumIntervals) intervals)"
    }

    /// Trend findings for login p99, message p99, error rate and generator RSS (those with at least 3
    /// intervals that measured them), only when the run is long enough to judge trends (`trendsNote`).
    public func findings() -> [TrendFinding] {
        guard trendsNote == nil else { return [] }
        return Self.findingMeasures.compactMap { measure, unit in
            trendLine(measure).map { TrendFinding(metric: measure.description, unit: unit, line: $0) }
        }
    }

    /// The run's own verdict from everything it measured (warm-up included), its stop reason and
    /// the messages only the end of the run found lost (`finalLost`). See `RunOutcome` for the kinds.
    public func outcome(stopReason: String, finalLost: UInt64 = 0) -> RunOutcome {
        let total = everything.total
        let started = total.counter(.sessionsStarted)
        let loggedIn = total.counter(.sessionsLoggedIn)
        let completed = total.counter(.sessionsCompleted)
        let failed = total.counter(.sessionsFailed)
        let dropped = total.counter(.droppedArrivals)
        let lost = segmented ? nil : total.ledger.lost + finalLost
        var topErrors: [String: UInt64] = [:]
        for (kind, count) in total.errors.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }).prefix(10) {
            topErrors[kind] = count
        }
        let work = RunWork(
            sessionsPlanned: planned.sessions, sessionsStarted: started, sessionsLoggedIn: loggedIn, sessionsCompleted: completed,
            sessionsFailed: failed, droppedArrivals: dropped, messagesPlanned: planned.messages,
            messagesSent: total.counter(.messagesSent), messagesReceived: total.counter(.messagesReceived), messagesLost: lost,
            errors: topErrors)
        let errorText = RunWork.topErrors(total.errors)
        let withErrors = errorText.isEmpty ? "" : " (\(errorText))"
        func outcome(_ kind: RunOutcome.Kind, _ reason: String) -> RunOutcome { RunOutcome(kind: kind, reason: reason, work: work) }
        if started == 0 {
            return outcome(.noSessionStarted, "no session was started" + (dropped > 0 ? " (\(dropped) arrivals dropped)" : ""))
        }
        let onlyUnreachable = { (errors: [String: UInt64]) in
            !errors.isEmpty && errors.keys.allSatisfy { RunOutcome.unreachableKinds.contains($0) }
        }
        if loggedIn == 0 {
            if onlyUnreachable(total.errors) {
                return outcome(.serverUnreachable, "the server was unreachable: none of \(started) sessions could connect (\(errorText))")
            }
            return outcome(.noSessionLoggedIn, "no session logged in: \(started) started\(withErrors)")
        }
        if let first = firstActivity, first.counter(.sessionsLoggedIn) == 0, onlyUnreachable(first.errors) {
            return outcome(
                .serverUnreachable,
                "the server was unreachable at start: the first interval's sessions could not connect (\(RunWork.topErrors(first.errors)))")
        }
        let reason = StopReason(rawValue: stopReason)
        let ranToPlan = reason?.ranAsPlanned ?? true
        if ranToPlan && completed == 0 && failed > 0 {
            return outcome(
                .noSessionCompleted,
                "no session completed its profile: \(loggedIn) of \(started) logged in, \(failed) failed\(withErrors)")
        }
        if let reason, !ranToPlan {
            return outcome(
                .cutShort, "the run was cut short (\(reason.rawValue)); \(loggedIn) of \(started) sessions logged in, \(completed) completed")
        }
        if failed > 0 {
            return outcome(.sessionsFailed, "\(failed) of \(started) sessions failed\(withErrors); \(completed) completed their profile")
        }
        if let lost, lost > 0 {
            return outcome(
                .messagesLost, "\(lost) of \(total.counter(.messagesSent)) messages were lost; \(completed) of \(started) sessions completed")
        }
        if dropped > 0 {
            return outcome(
                .arrivalsDropped,
                "\(dropped) arrivals were dropped (the generator could not start them in time); \(completed) of \(started) sessions completed")
        }
        return outcome(.ranAsPlanned, "\(completed) of \(started) sessions completed their profile; the load ran as planned")
    }

    /// The whole verdict at the end of the run.
    public func verdict(stopReason: String, finalLost: UInt64 = 0) -> Verdict {
        Verdict(
            thresholds: results(final: true, finalLost: finalLost), findings: findings(),
            outcome: outcome(stopReason: stopReason, finalLost: finalLost), trendsNote: trendsNote)
    }

    /// Losses the intervals reported (for computing `finalLost` from the summary's ledger).
    public var lostInIntervals: UInt64 { everything.total.ledger.lost }

}
