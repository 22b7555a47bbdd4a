import Foundation

/// The text `xmppload plan` prints: phases, then a time table of sessions started and expected alive
/// (with a bar per row), and expected message rates, all computed from the schedule and the profiles
/// (no connection).
///
/// "Expected alive" assumes each session lives for its profile's expected duration (think times and
/// message intervals at their means, plus `stay_online` until the load stops); answers are not waited
/// for, so it is a lower bound.
public enum PlanReport {
    /// One line of the time table.
    public struct Row: Sendable, Equatable {
        /// Time since the start of the run.
        public var time: Duration
        /// Sessions started by `time` (arrivals of the schedule).
        public var started: Int
        /// Sessions expected to be alive at `time`.
        public var alive: Int
        /// Messages (chat and groupchat sends) expected per second around `time`.
        public var messagesPerSecond: Double
    }

    /// What one session of the run does on average (weighted over the mix).
    public struct SessionShape: Sendable, Equatable {
        /// Messages a session sends once (chat and groupchat), outside `repeat: {forever: true}` loops.
        public var messages: Double
        /// Seconds of think times and message intervals a session spends, at their means.
        public var activeSeconds: Double
        /// Messages per second a session keeps sending until the load stops: from forever loops, and
        /// from profiles with `repeat: forever` that start over after each pass.
        public var sustainedMessagesPerSecond: Double
        /// Some profile stays online (or repeats forever) until the load stops.
        public var staysOnline: Bool

        public init(definition: RunDefinition) {
            let totalWeight = max(definition.profiles.reduce(0) { $0 + $1.weight }, 1e-9)
            messages = 0
            activeSeconds = 0
            sustainedMessagesPerSecond = 0
            staysOnline = false
            for entry in definition.profiles {
                let share = entry.weight / totalWeight
                let steps = entry.profile.steps
                let once = PlanReport.messageCount(steps)
                let seconds = PlanReport.expectedSeconds(steps)
                var sustained = PlanReport.sustainedRate(steps)
                if entry.profile.repeatMode == .forever {
                    sustained += once / max(seconds, 1)
                    staysOnline = true
                } else {
                    messages += share * once
                }
                activeSeconds += share * seconds
                sustainedMessagesPerSecond += share * sustained
                if PlanReport.containsStayOnline(steps) { staysOnline = true }
            }
        }
    }

    /// `count + 1` rows from the start to the end of the load (or, when the run ends only once every
    /// session finished, to the last arrival plus one session's active time).
    public static func rows(definition: RunDefinition, plan: LoadPlan, count: Int) -> [Row] {
        let schedule = ArrivalSchedule(plan: plan)
        let shape = SessionShape(definition: definition)
        let active = Duration.nanoseconds(Int64(shape.activeSeconds * 1e9))
        let end = plan.stopAfter ?? (plan.phases.reduce(Duration.zero) { $0 + $1.duration } + active)
        let steps = max(count, 2)
        // Messages are spread over a session's active time (at least one second, so that a profile
        // whose messages go out at once still shows a rate).
        let window = max(shape.activeSeconds, 1)
        return (0...steps).map { step in
            let time = Duration.nanoseconds(Int64(Double(end.nanoseconds) * Double(step) / Double(steps)))
            let started = schedule.startedArrivals(by: time)
            let stopped = plan.stopAfter.map { time >= $0 } ?? false
            let finished: Int
            if stopped {
                finished = started
            } else if shape.staysOnline {
                finished = 0
            } else {
                finished = time - active >= .zero ? schedule.startedArrivals(by: time - active) : 0
            }
            let windowStart = time - .nanoseconds(Int64(window * 1e9))
            let recent = started - (windowStart >= .zero ? schedule.startedArrivals(by: windowStart) : 0)
            let alive = max(0, started - finished)
            let rate = stopped ? 0 : Double(recent) * shape.messages / window + Double(alive) * shape.sustainedMessagesPerSecond
            return Row(time: time, started: started, alive: alive, messagesPerSecond: rate)
        }
    }

    public static func render(definition: RunDefinition, plan: LoadPlan, rows count: Int = 12) -> String {
        let schedule = ArrivalSchedule(plan: plan)
        let shape = SessionShape(definition: definition)
        var out = ""
        func line(_ text: String = "") { out += text + "\n" }
        line(
            "profiles: "
                + definition.profiles.map {
                    "\($0.profile.name) (weight \(format($0.weight))\($0.profile.transport == .any ? "" : ", \($0.profile.transport.rawValue)"))"
                }.joined(separator: ", "))
        if !definition.servers.isEmpty {
            // As the run would connect: with the file's variables (after --var) substituted.
            let servers = (try? definition.serverEndpoints())?.map(\.description) ?? definition.servers.map(\.text.source)
            line("servers: " + servers.joined(separator: ", "))
        }
        line(
            "seed \(plan.seed), graceful stop \(DurationText.format(plan.gracefulStop))"
                + (plan.durationCap.map { ", cap \(DurationText.format($0))" } ?? ""))
        line()
        line("phases")
        for (index, phase) in plan.phases.enumerated() {
            line(
                "  \(index + 1). \(phase.summary)  starts at \(DurationText.format(schedule.phaseStart(index)))  arrivals \(schedule.counts[index])"
                    + (phase.maxSessions.map { "  max sessions \($0)" } ?? ""))
        }
        line()
        line(
            "per session: \(format(shape.messages)) messages, ~\(format(shape.activeSeconds)) s of think times"
                + (shape.sustainedMessagesPerSecond > 0
                    ? ", then \(format(shape.sustainedMessagesPerSecond, digits: 3)) messages/s until the load stops"
                    : shape.staysOnline ? ", then online until the load stops" : ""))
        if shape.activeSeconds == 0 && !shape.staysOnline {
            line("(sessions without think times live only for their round trips, which plan cannot know: alive shows 0)")
        }
        line(
            "total: \(schedule.totalArrivals) sessions, ~\(format(shape.messages * Double(schedule.totalArrivals))) messages, load for "
                + (plan.stopAfter.map(DurationText.format) ?? "until every session finished"))
        line()
        let table = rows(definition: definition, plan: plan, count: count)
        let peak = table.map(\.alive).max() ?? 0
        let wholeSeconds = (table.last?.time ?? .zero) >= .seconds(10)
        line(pad("time", 8) + pad("started", 10) + pad("alive", 10) + pad("msgs/s", 10) + "  alive (expected)")
        for row in table {
            let time = wholeSeconds ? Duration.seconds((row.time.nanoseconds + 500_000_000) / 1_000_000_000) : row.time
            line(
                pad(DurationText.format(time), 8) + pad(String(row.started), 10) + pad(String(row.alive), 10)
                    + pad(format(row.messagesPerSecond), 10) + "  " + bar(row.alive, of: peak, width: 30))
        }
        return out
    }

    /// A horizontal bar of `width` characters at full scale, with eighth-character resolution.
    static func bar(_ value: Int, of peak: Int, width: Int) -> String {
        guard peak > 0, value > 0 else { return "" }
        let eighths = Int((Double(value) / Double(peak) * Double(width * 8)).rounded())
        let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partials[eighths % 8]
    }

    /// Messages a pass through `steps` sends, outside forever loops (a duration loop counts as many
    /// passes as fit at the mean think times, at least one).
    static func messageCount(_ steps: [Step]) -> Double {
        steps.reduce(0.0) { total, step in
            switch step.action {
            case .message(let action): return total + Double(action.count)
            case .muc(.send(_, let count, _)): return total + Double(count)
            case .loop(.times(let n), let body): return total + Double(n) * messageCount(body)
            case .loop(.duration(let duration), let body):
                let pass = expectedSeconds(body)
                return total + messageCount(body) * (pass > 0 ? max(duration.seconds / pass, 1) : 1)
            case .choose(let branches): return total + expectation(of: branches, messageCount)
            default: return total
            }
        }
    }

    /// Seconds a pass through `steps` spends in think times and message intervals (at their means),
    /// outside forever loops.
    static func expectedSeconds(_ steps: [Step]) -> Double {
        steps.reduce(0.0) { total, step in
            switch step.action {
            case .think(let think): return total + think.mean.seconds
            case .message(let action): return total + Double(max(action.count - 1, 0)) * (action.interval?.mean.seconds ?? 0)
            case .muc(.send(_, let count, let interval)): return total + Double(max(count - 1, 0)) * (interval?.mean.seconds ?? 0)
            case .loop(.times(let n), let body): return total + Double(n) * expectedSeconds(body)
            case .loop(.duration(let duration), _): return total + duration.seconds
            case .choose(let branches): return total + expectation(of: branches, expectedSeconds)
            default: return total
            }
        }
    }

    /// Messages per second that forever loops in `steps` keep sending (a loop without think times is
    /// paced by the server's answers, which `plan` cannot know: it counts one pass per second).
    static func sustainedRate(_ steps: [Step]) -> Double {
        steps.reduce(0.0) { total, step in
            switch step.action {
            case .loop(.forever, let body): return total + messageCount(body) / max(expectedSeconds(body), 1)
            case .loop(_, let body): return total + sustainedRate(body)
            case .choose(let branches): return total + expectation(of: branches, sustainedRate)
            default: return total
            }
        }
    }

    /// The weight-averaged `value` of a `choose`'s branches (weights need not add up to 1).
    static func expectation(of branches: [WeightedBranch], _ value: ([Step]) -> Double) -> Double {
        let weight = max(branches.reduce(0) { $0 + $1.weight }, 1e-9)
        return branches.reduce(0.0) { $0 + $1.weight / weight * value($1.steps) }
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

    static func format(_ value: Double, digits: Int = 1) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.\(digits)f", value)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
