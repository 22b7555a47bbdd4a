import Foundation

/// `xmppload compare --html FILE`: a self-contained page (inline CSS and SVG, no scripts, no
/// network) with the verdict table, the percentile spectrum of both sides for every step (login
/// phases are in the table), and login and message latency over time (p50 and p99 per interval)
/// of both sides' first runs overlaid.
public enum CompareHTMLReport {
    static let baselineColors = ["#2563eb", "#93c5fd"]
    static let candidateColors = ["#dc2626", "#fca5a5"]

    public static func render(_ comparison: Comparison, baseline: [MeasuredRun], candidate: [MeasuredRun]) -> String {
        let esc = HTMLReport.esc
        var body = "<h1>xmppload compare</h1>"
        body +=
            "<p class=\"meta\">baseline: \(esc(CompareTextReport.describe(comparison.baseline))) · candidate: \(esc(CompareTextReport.describe(comparison.candidate)))</p>"
        body +=
            "<p class=\"meta\">\(esc(comparison.method.rawValue)) (\(comparison.baseline.units) vs \(comparison.candidate.units) \(comparison.method.unitName)), \(comparison.resamples) resamples, seed \(comparison.seed), \(Int(comparison.confidencePercent)) % interval of the change</p>"
        if !comparison.problems.isEmpty {
            body +=
                "<div class=\"\(comparison.forced ? "warn" : "bad")\"><b>\(comparison.forced ? "Warning (--force): the runs are not comparable" : "Not comparable — no verdict")</b><ul>"
            for problem in comparison.problems { body += "<li>\(esc(problem))</li>" }
            body += "</ul></div>"
        }
        body += "<h2>Verdict: \(esc(comparison.outcome.rawValue))</h2>"
        if let withheld = comparison.verdictWithheld { body += "<div class=\"warn\"><b>No verdict:</b> \(esc(withheld))</div>" }
        body += table(comparison)

        let baseUnits = baseline.flatMap(\.intervals)
        let candUnits = candidate.flatMap(\.intervals)
        let steps = TextReport.orderedMetrics(Array(Set((baseUnits + candUnits).flatMap { $0.latency.keys })))
        if !steps.isEmpty { body += "<h2>Percentile spectra</h2>" }
        for step in steps where !step.hasPrefix("login.") {
            let base = merged(baseUnits, step)
            let cand = merged(candUnits, step)
            body += HTMLReport.spectrumChart(
                title: "\(step): latency by percentile (from the intended start)",
                series: [
                    .init(name: "baseline", color: baselineColors[0], points: spectrum(base)),
                    .init(name: "candidate", color: candidateColors[0], points: spectrum(cand)),
                ]
            ).render()
        }
        let overTime = MergedResults.chartedMetrics.filter { step in (baseUnits + candUnits).contains { $0.latency[step] != nil } }
        if !overTime.isEmpty { body += "<h2>Latency over time (first run of each side)</h2>" }
        for step in overTime {
            var series: [SVGChart.Series] = []
            for (name, runs, colors) in [("baseline", baseline, baselineColors), ("candidate", candidate, candidateColors)] {
                let units = runs.first?.intervals ?? []
                for (index, percentile) in [(0, 50.0), (1, 99.0)] {
                    series.append(
                        .init(
                            name: "\(name) p\(Int(percentile))", color: colors[index],
                            points: units.compactMap { unit in
                                unit.latency[step].map { (unit.end, Double($0.microseconds(atPercentile: percentile)) / 1000) }
                            }))
                }
            }
            body += SVGChart(title: "\(step) latency per interval", xLabel: "seconds since start", yLabel: "ms", series: series).render()
        }

        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>xmppload compare — \(esc(comparison.baseline.name)) vs \(esc(comparison.candidate.name))</title>
            \(HTMLReport.style)</head><body>
            \(body)
            <p class="meta">Latencies come from HDR histograms and count from each action's intended start. Each resample draws the units (intervals or runs) of each side with replacement, merges their histograms and reads the percentile of the merge; the interval is the 2.5–97.5 % range of the resampled changes. A metric regressed when the whole interval lies beyond its tolerance on the worse side.</p>
            </body></html>

            """
    }

    static func table(_ comparison: Comparison) -> String {
        guard !comparison.rows.isEmpty else { return "" }
        let esc = HTMLReport.esc
        var html =
            "<table><tr><th>metric</th><th>baseline</th><th>candidate</th><th>change</th><th>95 % interval</th><th>tolerance</th><th>verdict</th></tr>"
        for row in comparison.rows {
            let verdictClass = row.verdict == .regressed ? " class=\"regressed\"" : row.verdict == .improved ? " class=\"improved\"" : ""
            let sub = row.metric.step?.hasPrefix("login.") == true ? " class=\"sub\"" : ""
            html += "<tr><td\(sub)>\(esc(row.metric.key))</td><td>\(esc(CompareTextReport.value(row.baseline, row.metric)))</td>"
            html +=
                "<td>\(esc(CompareTextReport.value(row.candidate, row.metric)))</td><td>\(esc(CompareTextReport.change(row.change, row.metric)))</td>"
            html +=
                "<td>\(esc(CompareTextReport.interval(row)))</td><td>\(esc(CompareTextReport.tolerance(row)))</td>"
            html += "<td\(verdictClass)>\(esc(CompareTextReport.verdict(row, comparison.method)))</td></tr>"
        }
        return html + "</table>"
    }

    static func merged(_ units: [MeasuredUnit], _ step: String) -> BucketCounts {
        units.reduce(into: BucketCounts()) { total, unit in if let buckets = unit.latency[step] { total.add(buckets) } }
    }

    /// (x = 100 / (100 − p), ms) at p = 0, 50, 75, 87.5 … (halving the distance to 100), up to the
    /// last percentile the sample count resolves.
    static func spectrum(_ buckets: BucketCounts) -> [(x: Double, y: Double)] {
        let total = buckets.total
        guard total > 0 else { return [] }
        var points: [(x: Double, y: Double)] = []
        var remaining = 100.0
        while remaining * Double(total) / 100 >= 1 {
            let percentile = 100 - remaining
            points.append((100 / remaining, Double(buckets.microseconds(atPercentile: percentile)) / 1000))
            remaining /= pow(2, 0.25)
        }
        return points
    }
}
