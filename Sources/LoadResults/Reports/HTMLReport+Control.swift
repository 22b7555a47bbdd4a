/// The report's part for a steered run: the list of control changes and their markers on the
/// time charts (`ControlEvent`, from `--control-port`).
extension HTMLReport {
    /// A table of the control changes (time, action, what changed); empty when nobody steered the run.
    static func controlSection(_ summary: RunSummary) -> String {
        guard let events = summary.controlEvents, !events.isEmpty else { return "" }
        var html =
            "<h2>Control</h2><p class=\"meta\">The run was steered through --control-port; each change is a dashed line on the time charts.</p>"
        html += "<table class=\"control\"><tr><th>at (s)</th><th>action</th><th style=\"text-align:left\">change</th></tr>"
        for event in events {
            html +=
                "<tr><td>\(String(format: "%.1f", event.at))</td><td>\(esc(event.action))</td><td style=\"text-align:left\">\(esc(event.text))</td></tr>"
        }
        return html + "</table>"
    }

    /// The control changes as chart markers (x: seconds since the run's start).
    static func controlMarkers(_ summary: RunSummary) -> [(x: Double, label: String)] {
        (summary.controlEvents ?? []).map { ($0.at, $0.text) }
    }
}
