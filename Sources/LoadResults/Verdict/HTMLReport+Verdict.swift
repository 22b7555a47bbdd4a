extension HTMLReport {
    /// The verdict section: the run's own outcome, a table of thresholds (value, worst window,
    /// pass/fail) and the trend findings. Empty when the summary carries no verdict.
    static func verdictSection(_ summary: RunSummary) -> String {
        guard summary.verdict != nil || summary.thresholds != nil || !(summary.findings ?? []).isEmpty else { return "" }
        var html = "<h2>Verdict</h2>"
        if let outcome = summary.verdict {
            let style = outcome.kind == .ranAsPlanned ? "meta" : "warn"
            html += "<p class=\"\(style)\"><b>\(esc(outcome.kind.rawValue))</b> — \(esc(outcome.reason))</p>"
            if let work = outcome.work { html += "<p class=\"meta\">\(esc(work.line))</p>" }
        }
        html += limitParagraph(summary)
        if let thresholds = summary.thresholds, !thresholds.isEmpty {
            html += "<table><tr><th>threshold</th><th>value</th><th>worst window (s)</th><th>result</th></tr>"
            for result in thresholds {
                let color = result.status == .fail ? "#dc2626" : result.status == .pass ? "#16a34a" : "#64748b"
                let window = result.worstWindow.map { "\(Int($0.start))–\(Int($0.end)) of \(result.windows ?? 0)" } ?? ""
                html +=
                    "<tr><td>\(esc(result.threshold))</td><td>\(esc(result.value.map { result.unit.format($0) } ?? "–"))</td>"
                    + "<td>\(esc(window))</td><td style=\"color:\(color)\"><b>\(esc(result.status.rawValue))</b>"
                    + "\(result.note.map { " <span class=\"empty\">\(esc($0))</span>" } ?? "")</td></tr>"
            }
            html += "</table>"
        }
        if let note = summary.trendsNote {
            html += "<p class=\"meta\">trends: \(esc(note))</p>"
        } else if let findings = summary.findings, !findings.isEmpty {
            html +=
                "<table><tr><th>trend (after warm-up and ramp)</th><th>mean</th><th>slope per hour</th><th>95 % CI per hour</th><th>relative</th><th>drifting up</th></tr>"
            for finding in findings {
                let unit = finding.unit
                html +=
                    "<tr><td>\(esc(finding.metric))</td><td>\(esc(unit.format(finding.mean)))</td><td>\(esc(unit.format(finding.slopePerHour)))</td>"
                    + "<td>\(esc(unit.format(finding.slopeLowPerHour))) … \(esc(unit.format(finding.slopeHighPerHour)))</td>"
                    + "<td>\(esc(finding.relativePerHour.map { VerdictUnit.fractionPerHour.format($0) } ?? "–"))</td>"
                    + "<td>\(finding.driftingUp ? "<b style=\"color:#dc2626\">yes</b>" : "no")</td></tr>"
            }
            html += "</table>"
        }
        return html
    }
}
