import LoadProfile
import LoadResults

/// What the verdict needs from the plan: the users it aims at, when its ramps end, the work it asks
/// of this segment — pure functions of the plan, so `run`, `capacity` and tests judge alike.
extension RunJudge {
    /// The evaluator a run of `plan` is judged with: `thresholds` after `warmup`, trends after the
    /// plan's last ramp, the plan's share of arrivals and messages for this `segment`.
    public static func evaluator(
        plan: LoadPlan, definition: RunDefinition, segment: Segment, thresholds: [Threshold] = [], warmup: Duration = .zero,
        segmented: Bool = false
    ) -> VerdictEvaluator {
        VerdictEvaluator(
            rules: thresholds, warmup: warmup.seconds, loadEnd: plan.stopAfter?.seconds,
            targetSessions: targetUsers(plan), rampEnd: rampEnd(plan),
            planned: plannedWork(plan: plan, definition: definition, segment: segment),
            segmented: segmented || segment.count > 1)
    }

    /// The users a closed plan aims at (the largest phase's), for `sessions.online >= 95%`; nil for open plans.
    static func targetUsers(_ plan: LoadPlan) -> Int? {
        let targets = plan.phases.compactMap { phase -> Int? in
            switch phase.model {
            case .closed(let users, _): return users
            case .rampingUsers(let from, let to): return max(from, to)
            case .openConstant, .openRamping: return nil
            }
        }
        return targets.max()
    }

    /// Seconds since the start when the plan's last ramp ends (a closed phase's `ramp`, a ramping
    /// phase's whole length); nil when no phase ramps. Trends are judged only after it.
    static func rampEnd(_ plan: LoadPlan) -> Double? {
        var elapsed = 0.0
        var end: Double?
        for phase in plan.phases {
            switch phase.model {
            case .closed(_, let ramp) where ramp > .zero: end = elapsed + ramp.seconds
            case .rampingUsers, .openRamping: end = elapsed + phase.duration.seconds
            default: break
            }
            elapsed += phase.duration.seconds
        }
        return end
    }

    /// What the plan asks of this segment: its share of the schedule's arrivals, and the messages
    /// they send when the profiles send a fixed number (nil with sends until the load stops).
    static func plannedWork(plan: LoadPlan, definition: RunDefinition, segment: Segment) -> PlannedWork {
        let arrivals = ArrivalSchedule(plan: plan).totalArrivals
        let sessions = segment.arrivals(before: arrivals)
        let shape = PlanReport.SessionShape(definition: definition)
        let messages = shape.sustainedMessagesPerSecond > 0 ? nil : Int((shape.messages * Double(sessions)).rounded())
        return PlannedWork(sessions: sessions, messages: messages)
    }
}
