import Foundation

/// One change a person made to a running test through `--control-port` (`xmppload control`): a new
/// load, a pause or resume of arrivals, a stop. Written the moment it is accepted as a line of
/// `intervals.jsonl` (`{"event":"control", …}`, told apart from interval lines by its `event` key),
/// listed in `summary.json` as `control_events`, and drawn as a marker on the report's time charts.
///
/// Times are seconds since the run's start (the same clock as the intervals' `start`/`end`).
public struct ControlEvent: Codable, Sendable, Equatable {
    /// Always `"control"`: what tells this line of `intervals.jsonl` from an interval.
    public var event = "control"
    /// Seconds since the run's start when the change was accepted.
    public var at: Double
    /// `load`, `pause`, `resume` or `stop`.
    public var action: String
    /// `load` of an open model: the arrival rate asked from now on (sessions per second).
    public var rate: Double?
    /// `load` of a closed model: the target number of concurrent sessions from now on.
    public var sessions: Int?
    /// `load`: the ramp's length in seconds (0: at once).
    public var over: Double?
    /// `load`: the asked value (rate or sessions) just before the change.
    public var from: Double?
    /// One line for people: `rate 10/s → 40/s over 5s`.
    public var text: String

    public init(
        at: Double, action: String, rate: Double? = nil, sessions: Int? = nil, over: Double? = nil, from: Double? = nil,
        text: String
    ) {
        self.at = at
        self.action = action
        self.rate = rate
        self.sessions = sessions
        self.over = over
        self.from = from
        self.text = text
    }

    /// The event as one line of `intervals.jsonl` (keys sorted, newline-terminated).
    public var line: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(self)) ?? Data("{\"event\":\"control\"}".utf8)
        data.append(0x0A)
        return data
    }

    /// `  12.3 s  rate 10/s → 40/s over 5s` — the console summary's line (times right-aligned).
    public var listing: String { String(format: "%6.1f s  ", at) + text }
}

extension RunSummary {
    /// A run whose load was changed through the control port no longer ran its plan: the verdict's
    /// planned figures (sessions and messages the plan asked) are dropped rather than compared with
    /// what was done, and its reason says the run was steered. Pauses withhold arrivals without
    /// counting them as dropped, so a steered run is not judged `arrivals-dropped` for them; a
    /// `/stop` is a stop as SIGINT (`interrupted`, hence `cut-short`), since a person cut it short.
    public mutating func noteSteering() {
        guard let events = controlEvents else { return }
        let changes = events.filter { $0.action != "stop" }.count
        guard changes > 0, var outcome = verdict else { return }
        outcome.work?.sessionsPlanned = nil
        outcome.work?.messagesPlanned = nil
        outcome.reason += " (steered through the control port: \(changes) change\(changes == 1 ? "" : "s"); the plan's figures do not apply)"
        verdict = outcome
    }
}
