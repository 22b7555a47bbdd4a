import Foundation

/// The text `xmppload plan` prints: phases, then a time table of sessions started and expected alive,
/// and expected message rates, all computed from the schedule and the profiles (no connection).
///
/// "Expected alive" assumes each session lives for its profile's expected duration (think times and
/// message intervals at their means, plus `stay_online` until the load stops); answers are not waited
/// for, so it is a lower bound.
public enum PlanReport {
    public static func render(definition: RunDefinition, plan: LoadPlan, rows: Int = 12) -> String {
        let schedule = ArrivalSchedule(plan: plan)
        var out = ""
        func line(_ text: String = "") { out += text + "\n" }
        line("profiles: " + definition.profiles.map { "\($0.profile.name) (weight \(format($0.weight)))" }.joined(separator: ", "))
        line("seed \(plan.seed), graceful stop \(DurationText.format(plan.gracefulStop))" + (plan.durationCap.map { ", cap \(DurationText.format($0))" } ?? ""))
        line()
        line("phases")
        for (index, phase) in plan.phases.enumerated() {
            line("  \(index + 1). \(phase.summary)  starts at \(DurationText.format(schedule.phaseStart(index)))  arrivals \(schedule.counts[index])"
                 + (phase.maxSessions.map { "  max sessions \($0)" } ?? ""))
        }
        let totalWeight = definition.profiles.reduce(0) { $0 + $1.weight }
        let messagesPerSession = definition.profiles.reduce(0.0) { $0 + $1.weight / totalWeight * Double(messageCount($1.profile.steps)) }
        let activeSeconds = definition.profiles.reduce(0.0) { $0 + $1.weight / totalWeight * expectedSeconds($1.profile.steps) }
        let staysOnline = definition.profiles.contains { containsStayOnline($0.profile.steps) }
        let end = plan.stopAfter ?? (plan.phases.reduce(Duration.zero) { $0 + $1.duration } + .seconds(activeSeconds))
        line()
        line("per session: \(format(messagesPerSession)) messages, ~\(format(activeSeconds)) s of steps" + (staysOnline ? ", then online until the load stops" : ""))
        line("total: \(schedule.totalArrivals) sessions, ~\(format(messagesPerSession * Double(schedule.totalArrivals))) messages, load for \(plan.stopAfter.map(DurationText.format) ?? "until every session finished")")
        line()
        line("    time   started   alive (expected)   messages/s (expected)")
        let count = max(rows, 2)
        for row in 0...count {
            let t = Duration.nanoseconds(Int64(Double(end.nanoseconds) * Double(row) / Double(count)))
            let started = schedule.startedArrivals(by: t)
            let finishedBy = t - .seconds(activeSeconds)
            let finished = staysOnline && (plan.stopAfter.map { t < $0 } ?? true) ? 0 : (finishedBy > .zero ? schedule.startedArrivals(by: finishedBy) : 0)
            let recent = max(0, started - (t - .seconds(max(activeSeconds, 1)) > .zero ? schedule.startedArrivals(by: t - .seconds(max(activeSeconds, 1))) : 0))
            let rate = activeSeconds > 0 ? Double(recent) * messagesPerSession / max(activeSeconds, 1) : 0
            line(pad(DurationText.format(t), 8) + pad(String(started), 10) + pad(String(max(0, started - finished)), 19) + pad(format(rate), 24))
        }
        return out
    }

    static func messageCount(_ steps: [Step]) -> Int {
        steps.reduce(0) { total, step in
            switch step.action {
            case .message(let action): return total + action.count
            case .muc(.send(_, let count, _)): return total + count
            case .loop(.times(let n), let body): return total + n * messageCount(body)
            case .choose(let branches):
                let weight = branches.reduce(0) { $0 + $1.weight }
                return total + Int(branches.reduce(0.0) { $0 + $1.weight / max(weight, 1e-9) * Double(messageCount($1.steps)) })
            default: return total
            }
        }
    }

    static func expectedSeconds(_ steps: [Step]) -> Double {
        steps.reduce(0.0) { total, step in
            switch step.action {
            case .think(let think): return total + think.mean.seconds
            case .message(let action): return total + Double(max(action.count - 1, 0)) * (action.interval?.mean.seconds ?? 0)
            case .muc(.send(_, let count, let interval)): return total + Double(max(count - 1, 0)) * (interval?.mean.seconds ?? 0)
            case .loop(.times(let n), let body): return total + Double(n) * expectedSeconds(body)
            case .loop(.duration(let duration), _): return total + duration.seconds
            case .choose(let branches):
                let weight = branches.reduce(0) { $0 + $1.weight }
                return total + branches.reduce(0.0) { $0 + $1.weight / max(weight, 1e-9) * expectedSeconds($1.steps) }
            default: return total
            }
        }
    }

    static func containsStayOnline(_ steps: [Step]) -> Bool {
        steps.contains { step in
            switch step.action {
            case .stayOnline, .loop(.forever, _): return true
            case .loop(_, let body): return containsStayOnline(body)
            case .choose(let branches): return branches.contains { containsStayOnline($0.steps) }
            default: return false
            }
        }
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text + "  "
    }
}
