import Foundation

/// The text `xmppload compare` prints: both sides, the method, then one line per metric — baseline,
/// candidate, change, its 95 % interval, the tolerance (with the latency floor where it decides) and
/// the verdict — and the outcome. When the runs are not comparable it lists every reason (as
/// warnings with `--force`); when too few runs were given for a verdict it says so and how to get one.
public enum CompareTextReport {
    public static func render(_ comparison: Comparison) -> String {
        var out = ""
        func line(_ text: String = "") { out += text + "\n" }
        line("xmppload compare — baseline: \(describe(comparison.baseline)) vs candidate: \(describe(comparison.candidate))")
        let unitName = comparison.method.unitName
        line(
            "method: \(comparison.method.rawValue) (\(comparison.baseline.units) vs \(comparison.candidate.units) \(unitName)), \(comparison.resamples) resamples, seed \(comparison.seed); \(Int(comparison.confidencePercent)) % interval of the change"
        )
        if !comparison.problems.isEmpty {
            line()
            line(comparison.forced ? "WARNING (--force): the runs are not comparable:" : "NOT COMPARABLE — no verdict (use --force to judge anyway):")
            for problem in comparison.problems { line("  - \(problem)") }
        }
        if !comparison.rows.isEmpty {
            line()
            line(
                TextReport.pad("metric", 24) + TextReport.pad("baseline", 13, right: true) + TextReport.pad("candidate", 13, right: true)
                    + TextReport.pad("change", 11, right: true) + "   " + TextReport.pad("95 % interval", 24) + TextReport.pad("tolerance", 20)
                    + "verdict")
            for row in comparison.rows {
                line(
                    TextReport.pad(row.metric.key, 24)
                        + TextReport.pad(value(row.baseline, row.metric), 13, right: true)
                        + TextReport.pad(value(row.candidate, row.metric), 13, right: true)
                        + TextReport.pad(change(row.change, row.metric), 11, right: true) + "   "
                        + TextReport.pad(interval(row), 24)
                        + TextReport.pad(tolerance(row), 20)
                        + verdict(row, comparison.method))
            }
        }
        let fromRecordings = comparison.rows.filter(\.ofRecordings).map(\.metric.key)
        if !fromRecordings.isEmpty {
            line(
                "fewer than \(Bootstrap.minimumUnits) \(unitName) carry \(fromRecordings.joined(separator: ", ")): their single recordings were resampled instead (assumes independent recordings)"
            )
        }
        line()
        switch comparison.outcome {
        case .notComparable: line("outcome: not comparable")
        case .insufficientRuns: line("outcome: no verdict — \(comparison.verdictWithheld ?? "too few runs")")
        case .regressed: line("outcome: regressed: \(comparison.regressed.joined(separator: ", "))")
        case .noRegression: line("outcome: no regression")
        }
        return out
    }

    /// `±10 %`, or `±150 % (1 ms)` when the latency floor decides (it exceeds the relative one).
    static func tolerance(_ row: Comparison.Row) -> String {
        var text = "±" + number(row.tolerance) + " " + row.metric.changeUnit
        if let floor = row.floor, let baseline = row.baseline, baseline > 0, floor / baseline * 100 >= row.tolerance * 0.999_999 {
            text += " (\(number(floor)) ms)"
        }
        return text
    }

    /// The verdict, or for rows not judged what their interval indicates (resampled within runs,
    /// or over too few rounds).
    static func verdict(_ row: Comparison.Row, _ method: Comparison.Method) -> String {
        guard row.verdict == .notJudged, let indication = row.indication else { return row.verdict.rawValue }
        return "not judged (\(method == .pairedRounds ? "few rounds" : "within runs"): \(indication.rawValue))"
    }

    static func describe(_ side: Comparison.Side) -> String {
        var text = side.name
        if !side.serverSoftware.isEmpty { text += " [\(side.serverSoftware.joined(separator: ", "))]" }
        let tags = side.tags.flatMap { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        if !tags.isEmpty { text += " {\(Array(Set(tags)).sorted().joined(separator: " "))}" }
        return text
    }

    static func value(_ value: Double?, _ metric: CompareMetric) -> String {
        guard let value else { return "—" }
        switch metric.kind {
        case .latency: return TextReport.formatMs(value) + " ms"
        case .throughput: return number(value) + " /s"
        case .rate: return String(format: "%.3f %%", value)
        case .cost: return metric.unit == "B" ? TextReport.formatBytes(UInt64(max(0, value.rounded()))) : TextReport.formatMs(value) + " ms"
        }
    }

    static func change(_ value: Double?, _ metric: CompareMetric) -> String {
        guard let value else { return "—" }
        return signed(value) + " " + metric.changeUnit
    }

    static func interval(_ row: Comparison.Row) -> String {
        guard let low = row.low, let high = row.high else { return "—" }
        return "[\(signed(low)), \(signed(high))] \(row.metric.changeUnit)"
    }

    static func signed(_ value: Double) -> String {
        (value >= 0 ? "+" : "") + number(value)
    }

    static func number(_ value: Double) -> String {
        if abs(value) >= 100 { return String(format: "%.0f", value) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}
