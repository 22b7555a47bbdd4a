import Foundation

// The outcome of a capacity search as written: the `capacity` block of summary.json, the headline
// and per-step table on the console, and report.html's charts against offered load.

/// A finished (or stopped) capacity search: settings, every step and the answer.
///
/// `capacity` is in the dimension's unit (nil when there is none: the first step failed, or the
/// generator was the limit). `limitedBy` names the rule that failed by the widest margin at
/// `firstFail` (the lowest failing load above the capacity). `kind` is `found`, `reached-max`,
/// `first-step-failed` or `generator-limited`; `headline` is the one line the console prints.
public struct CapacityResult: Sendable, Equatable, Codable {
    public var kind: String
    public var dimension: CapacityDimension
    public var capacity: Double?
    public var firstFail: Double?
    public var limitedBy: String?
    /// False when bisecting stopped before the resolution was reached (collapses).
    public var resolved: Bool
    public var headline: String
    /// Knees whose repeat failed (the search stepped down from each).
    public var steppedDown: [Double]
    public var rules: [String]
    /// Each rule's bound, in its unit (the latency chart draws it as the limit); nil in files
    /// written before it was recorded.
    public var ruleBounds: [Double]?
    public var start: Double
    public var max: Double
    public var resolution: Double
    /// ×growth per climbing step (2; a ladder's --ladder-ratio); nil in files before it was written.
    public var growth: Double?
    public var warmupSeconds: Double
    public var stepSeconds: Double
    public var steps: [CapacityStep]
    /// Notes for the reader (stepped down, stopped early, generator advice).
    public var notes: [String]
    /// What bounded the knee: who limited the first failing step above the capacity (its run's
    /// `LimitAttribution`: server, generator, none or unknown, with the evidence); nil when there
    /// is no such step or it was not judged.
    public var knee: LimitAttribution?

    enum CodingKeys: String, CodingKey {
        case kind, dimension, capacity
        case firstFail = "first_fail"
        case limitedBy = "limited_by"
        case resolved, headline
        case steppedDown = "stepped_down"
        case rules
        case ruleBounds = "rule_bounds"
        case start, max, resolution, growth
        case warmupSeconds = "warmup_s"
        case stepSeconds = "step_s"
        case steps, notes, knee
    }

    /// The search's answer and its steps, with the headline worded for people.
    public init(
        search: CapacitySearch, steps: [CapacityStep], rules: [Threshold], dimension: CapacityDimension,
        warmupSeconds: Double, stepSeconds: Double
    ) {
        self.dimension = dimension
        self.steps = steps
        self.rules = rules.map(\.text)
        ruleBounds = rules.map(\.bound)
        start = search.settings.start
        max = search.settings.max
        resolution = search.settings.resolution
        growth = search.settings.growth
        self.warmupSeconds = warmupSeconds
        self.stepSeconds = stepSeconds
        steppedDown = search.steppedDown
        resolved = !search.stoppedEarly
        notes = []
        capacity = nil
        firstFail = nil
        limitedBy = nil
        for knee in search.steppedDown {
            notes.append("the knee at \(dimension.short(knee)) failed its repeat; the search stepped down")
        }
        if !search.settings.bisects {
            notes.append(
                "a ladder (the generators of one search cannot agree on a bisect): the capacity is resolved to the ×\(CapacityStep.number(search.settings.growth)) between steps, and not repeated"
            )
        } else if search.stoppedEarly {
            notes.append(
                "bisecting stopped after \(search.collapses) collapsed steps, before the \(VerdictUnit.fraction.format(resolution)) resolution: the server was not hammered further"
            )
        }
        switch search.next {
        case .step:
            kind = "stopped"
            headline = "capacity: the search was stopped before an answer"
            capacity = search.lastPass
        case .done(.found(let found, let fail, _)):
            kind = "found"
            capacity = found
            firstFail = fail
            headline = "capacity: \(dimension.format(found))"
            knee = fail.flatMap { fail in steps.last { $0.asked == fail && $0.outcome != .pass }?.limit }
            if let fail, let step = steps.last(where: { $0.asked == fail && $0.outcome != .pass }), let (rule, result) = step.limitingRule(rules) {
                limitedBy = rule.text
                let value = result.value.map { rule.unit.format($0) } ?? "no data"
                headline +=
                    " — limited by \(rule.quantity) (\(value) \(Self.failedOperator(rule)) \(rule.unit.format(rule.bound)) at \(dimension.short(fail)))"
            } else if let fail {
                headline += " — \(dimension.short(fail)) failed"
            }
        case .done(.reachedMax(let load)):
            kind = "reached-max"
            capacity = load
            headline = "capacity: at least \(dimension.format(load)) — every step up to --max passed (raise --max to search further)"
        case .done(.firstStepFailed):
            kind = "first-step-failed"
            let first = steps.first
            headline = "capacity: below \(dimension.format(search.settings.start)) — the first step failed"
            knee = steps.first?.limit
            if let first, let (rule, result) = first.limitingRule(rules) {
                headline += " (\(rule.quantity) \(result.value.map { rule.unit.format($0) } ?? "no data"))"
            }
            if let reason = first?.reason { headline += ": \(reason)" }
        case .done(.generatorLimited(let load)):
            kind = "generator-limited"
            let reason = steps.last(where: { $0.asked == load })?.reason ?? "the generator saturated"
            headline = "no capacity: the generator, not the server, was the limit at \(dimension.short(load)): \(reason)"
            notes.append(Self.generatorAdvice)
            capacity = nil
        }
    }

    /// `the knee (80/s) was server-bound: login p99 1.6 s: server-bound — prosody at 97 % of 1 core …`;
    /// nil when the failing step's limit is unknown.
    public var kneeLine: String? {
        guard let knee else { return nil }
        let load = firstFail.map { " (\(dimension.short($0)))" } ?? ""
        return "the knee\(load): limited by \(knee.limitedBy.rawValue) — \(knee.evidence)"
    }

    /// What to do when the generator is the limit.
    public static let generatorAdvice =
        "the server was not measured past this load: give the generator more room (a release build, an idle machine with more cores and --loops, more --source addresses); or spread the search over several generators: capacity --segment i/N with one --start-at, then xmppload report on their directories (docs/CAPACITY.md)"

    /// The operator that failed: `>` for a `<` rule, `<` for a `>` rule.
    static func failedOperator(_ rule: Threshold) -> String {
        switch rule.comparison {
        case .less, .lessOrEqual: return ">"
        case .greater, .greaterOrEqual: return "<"
        case .equal: return "!="
        case .notEqual: return "=="
        }
    }

    // MARK: - Text

    /// The per-step table: step, why, load asked and achieved, logins/s, errors, each rule's value, outcome.
    public func table() -> String {
        var header = ["step", "purpose", "asked", "achieved", "logins/s", "errors"] + rules + ["result"]
        var rows: [[String]] = []
        for step in steps {
            var row = [
                String(step.index), step.purpose.rawValue, dimension.short(step.asked), CapacityStep.number(step.achieved),
                CapacityStep.number(step.loginsPerSecond), VerdictUnit.fraction.format(step.errorRate),
            ]
            row += step.rules.map { result in result.value.map { result.unit.format($0) } ?? "no data" }
            row.append(step.outcome.rawValue + (step.cutShort ? " (cut short)" : ""))
            rows.append(row)
        }
        if header.count != (rows.first?.count ?? header.count) { header = Array(header.prefix(rows[0].count)) }
        let widths = header.indices.map { column in ([header[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        var text = line(header) + "\n"
        for (row, step) in zip(rows, steps) {
            text += line(row) + "\n"
            if let reason = step.reason { text += "      \(reason)\n" }
        }
        return text
    }

    // MARK: - HTML

    /// report.html of the search: the headline, the table, and two charts against offered load —
    /// achieved load and logins/s, and each latency rule's value with its limit — with the knee marked.
    public func html(title: String) -> String {
        let esc = HTMLReport.esc
        var body = "<h1>xmppload capacity — \(esc(title))</h1>"
        body += "<p class=\"\(kind == "found" || kind == "reached-max" ? "meta" : "warn")\"><b>\(esc(headline))</b></p>"
        if let kneeLine { body += "<p class=\"meta\">\(esc(kneeLine))</p>" }
        for note in notes { body += "<p class=\"warn\">\(esc(note))</p>" }
        body +=
            "<p class=\"meta\">rules: \(rules.map(esc).joined(separator: " · ")) · steps of \(CapacityStep.number(stepSeconds)) s after a \(CapacityStep.number(warmupSeconds)) s warm-up · resolution \(esc(VerdictUnit.fraction.format(resolution)))</p>"
        body += "<table><tr><th>step</th><th>purpose</th><th>asked</th><th>achieved</th><th>logins/s</th><th>errors</th>"
        body += rules.map { "<th>\(esc($0))</th>" }.joined() + "<th>result</th></tr>"
        for step in steps {
            let cells =
                [
                    String(step.index), step.purpose.rawValue, dimension.short(step.asked), CapacityStep.number(step.achieved),
                    CapacityStep.number(step.loginsPerSecond), VerdictUnit.fraction.format(step.errorRate),
                ] + step.rules.map { result in result.value.map { result.unit.format($0) } ?? "no data" }
            let outcome = step.outcome.rawValue + (step.cutShort ? " (cut short)" : "")
            body += "<tr>" + cells.map { "<td>\(esc($0))</td>" }.joined()
            body += "<td class=\"\(step.outcome == .pass ? "pass" : "fail")\" title=\"\(esc(step.reason ?? ""))\">\(esc(outcome))</td></tr>"
        }
        body += "</table>"
        body += charts()
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>xmppload capacity — \(esc(title))</title>
            \(HTMLReport.style)</head><body>
            \(body)
            <p class="meta">Each step is judged on its own histograms after its warm-up; every step's full results are in steps/ (xmppload report steps/NN-…).</p>
            </body></html>

            """
    }

    /// The last step at each asked load, by load.
    var pointsByLoad: [CapacityStep] {
        var byLoad: [Double: CapacityStep] = [:]
        for step in steps { byLoad[step.asked] = step }
        return byLoad.values.sorted { $0.asked < $1.asked }
    }

    func charts() -> String {
        let points = pointsByLoad
        guard !points.isEmpty else { return "" }
        let palette = HTMLReport.palette
        let xLabel = dimension == .arrivalRate ? "offered load (logins/s asked)" : "offered load (sessions asked)"
        let span = (points.last!.asked - points.first!.asked)
        let width = Swift.max(span * 0.01, points.first!.asked * 0.005)
        let knee = capacity.map { [(start: $0 - width, end: $0 + width, label: "capacity \(dimension.short($0))")] } ?? []
        var throughput = SVGChart(
            title: "Achieved against offered load" + (capacity.map { " (knee at \(dimension.short($0)))" } ?? ""), xLabel: xLabel,
            yLabel: dimension == .arrivalRate ? "per second" : "sessions",
            series: [
                .init(name: "offered", color: palette[8], points: points.map { ($0.asked, $0.asked) }),
                .init(name: dimension == .arrivalRate ? "started/s" : "online", color: palette[0], points: points.map { ($0.asked, $0.achieved) }),
                .init(name: "logins/s", color: palette[2], points: points.map { ($0.asked, $0.loginsPerSecond) }),
            ])
        throughput.bands = knee
        var html = "<h2>Against offered load</h2>" + throughput.render()
        let latencyRules = rules.enumerated().filter { index, _ in
            points.contains { $0.rules.indices.contains(index) && $0.rules[index].unit == .milliseconds }
        }
        if !latencyRules.isEmpty {
            var series: [SVGChart.Series] = []
            for (position, (index, text)) in latencyRules.enumerated() {
                series.append(
                    .init(
                        name: text, color: palette[(position * 2 + 1) % palette.count],
                        points: points.compactMap { step in step.rules[index].value.map { (step.asked, $0) } }))
                if let ruleBounds, ruleBounds.indices.contains(index) {
                    series.append(
                        .init(
                            name: "limit \(VerdictUnit.milliseconds.format(ruleBounds[index]))", color: palette[8],
                            points: [(points.first!.asked, ruleBounds[index]), (points.last!.asked, ruleBounds[index])]))
                }
            }
            var latency = SVGChart(title: "Latency rules against offered load", xLabel: xLabel, yLabel: "ms", series: series)
            latency.bands = knee
            html += latency.render()
        }
        let other = rules.enumerated().filter { index, _ in
            points.contains { $0.rules.indices.contains(index) && $0.rules[index].unit != .milliseconds }
        }
        if !other.isEmpty {
            var errors = SVGChart(
                title: "Error rate against offered load", xLabel: xLabel, yLabel: "%",
                series: [.init(name: "errors %", color: palette[1], points: points.map { ($0.asked, $0.errorRate * 100) })])
            errors.bands = knee
            html += errors.render()
        }
        return html
    }
}

extension CapacityResult {
    /// summary.json of a capacity search: the search under `capacity`.
    private struct File: Codable {
        var capacity: CapacityResult
    }

    /// The search in `directory`'s summary.json, or nil when it holds no capacity search (a run's summary).
    public static func read(from directory: ResultsDirectory) -> CapacityResult? {
        guard let data = FileManager.default.contents(atPath: directory.file(ResultsDirectory.summaryFile)) else { return nil }
        return try? JSONDecoder().decode(File.self, from: data).capacity
    }

    /// `{"capacity": …}`, pretty and with sorted keys, as the search writes summary.json.
    public func summaryFile() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(File(capacity: self))
    }
}
