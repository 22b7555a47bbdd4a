import Foundation

/// The self-contained HTML report (`report.html`): inline CSS and SVG, no scripts, no network.
///
/// Sections: summary tables (sessions, messages, bytes, latency percentiles per metric, errors,
/// generator health with a saturation warning), then charts: sessions over time, logins/s and
/// messages/s, login and message latency percentiles over time, the percentile spectrum of every
/// step, the login phase breakdown, errors over time, and generator health (CPU, RSS, loop lag).
public enum HTMLReport {
    static let palette = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569", "#ea580c"]

    public static func render(_ results: MergedResults) -> String {
        let summary = results.summary
        let points = results.points
        var body = ""
        body += "<h1>xmppload — \(esc(summary.profile))</h1>"
        body +=
            "<p class=\"meta\">run \(esc(summary.runID)) · \(esc(ISO8601DateFormatter().string(from: summary.startedAt))) · \(String(format: "%.1f", summary.durationSeconds)) s · stopped: \(esc(summary.stopReason))"
        if let manifest = results.manifests.first {
            body +=
                " · server \(esc(manifest.server)) (\(esc(manifest.domain))) · load \(esc(manifest.loadModel)) · tool \(esc(manifest.toolVersion))"
        }
        if results.directories.count > 1 { body += " · merged from \(results.directories.count) generators" }
        body += "</p>"
        if results.endpoints.count > 1 {
            body += "<p class=\"meta\">generators: \(results.endpoints.map(esc).joined(separator: " · "))</p>"
        }
        if summary.generator.saturated {
            body +=
                "<p class=\"warn\">The generator saturated in \(summary.generator.saturatedIntervals) interval(s): those latencies measure the generator, not the server.</p>"
        }
        body += verdictSection(summary)
        body += outageSection(summary)
        body += controlSection(summary)
        body += hintsSection(summary.hints)
        if let notices = summary.notices, !notices.isEmpty {
            body +=
                "<div class=\"warn\"><b>Server notices</b><ul>"
                + notices.map { "<li><b>\(esc($0.kind))</b> ×\($0.count): \(esc($0.text))</li>" }.joined() + "</ul></div>"
        }
        body += tables(summary)
        body += loginPathsSection(summary.loginPaths)
        body += loginFailuresSection(summary)
        body += nodesSection(summary.nodes)
        body += forensicsSection(results.total.forensics)

        let time: (IntervalPoint) -> Double = { $0.end }
        let bands = outageBands(summary)
        let markers = controlMarkers(summary)
        body += "<h2>Over time</h2>"
        var sessions = SVGChart(
            title: "Sessions", xLabel: "seconds", yLabel: "sessions",
            series: [
                .init(name: "online", color: palette[0], points: points.map { (time($0), Double($0.online)) }),
                .init(name: "connecting", color: palette[3], points: points.map { (time($0), Double($0.connecting)) }),
            ])
        sessions.bands = bands
        sessions.markers = markers
        body += sessions.render()
        var throughput = SVGChart(
            title: "Throughput", xLabel: "seconds", yLabel: "per second",
            series: [
                .init(name: "logins/s", color: palette[0], points: points.map { (time($0), $0.loginsPerSecond) }),
                .init(name: "messages/s", color: palette[2], points: points.map { (time($0), $0.messagesPerSecond) }),
            ])
        throughput.bands = bands
        throughput.markers = markers
        body += throughput.render()
        for metric in MergedResults.chartedMetrics where points.contains(where: { $0.percentiles[metric] != nil }) {
            let names = ["p50", "p90", "p99", "max"]
            body += SVGChart(
                title: "\(metric) latency percentiles per interval", xLabel: "seconds", yLabel: "ms",
                series: names.enumerated().map { index, name in
                    .init(
                        name: name, color: palette[index],
                        points: points.compactMap { point in
                            point.percentiles[metric].map { (time(point), $0[index]) }
                        })
                }
            ).render()
        }
        body += SVGChart(
            title: "Errors and dropped arrivals", xLabel: "seconds", yLabel: "per interval",
            series: [
                .init(name: "errors", color: palette[1], points: points.map { (time($0), Double($0.errors)) }),
                .init(name: "dropped", color: palette[3], points: points.map { (time($0), Double($0.dropped)) }),
            ]
        ).render()

        body += "<h2>Latency distribution</h2>"
        let metrics = TextReport.orderedMetrics(Array(results.total.latency.keys))
        var spectrum: [SVGChart.Series] = []
        for (index, name) in metrics.enumerated() where !name.hasPrefix("login.") {
            guard let histogram = results.total.latency[name] else { continue }
            spectrum.append(
                .init(
                    name: name, color: palette[index % palette.count],
                    points: histogram.spectrum().filter { $0.percentile < 100 }.map { (100 / (100 - $0.percentile), Double($0.microseconds) / 1000) })
            )
        }
        body += spectrumChart(title: "Percentile spectrum per step (latency from the intended start)", series: spectrum).render()
        let phases = TextReport.loginPhases.compactMap { name in
            summary.latencyMilliseconds[name].map { (name.replacingOccurrences(of: "login.", with: ""), $0.p50) }
        }
        if !phases.isEmpty {
            body += SVGChart.stackedBar(title: "Login phase breakdown (p50, ms)", segments: phases, colors: palette)
        }

        body += serverSection(results)

        body += "<h2>Generator health</h2>"
        let healthPoints = points.compactMap { point in point.health.map { (point.end, $0) } }
        body += SVGChart(
            title: "CPU (% of one core) and event-loop lag", xLabel: "seconds", yLabel: "% / ms",
            series: [
                .init(name: "cpu %", color: palette[0], points: healthPoints.map { ($0.0, $0.1.cpuPercent) }),
                .init(name: "lag p99 ms", color: palette[1], points: healthPoints.map { ($0.0, $0.1.loopLagP99Milliseconds) }),
                .init(name: "lag max ms", color: palette[3], points: healthPoints.map { ($0.0, $0.1.loopLagMaxMilliseconds) }),
            ]
        ).render()
        body += SVGChart(
            title: "Resident memory and open descriptors", xLabel: "seconds", yLabel: "MiB / fds",
            series: [
                .init(name: "rss MiB", color: palette[2], points: healthPoints.map { ($0.0, Double($0.1.rssBytes) / 1_048_576) }),
                .init(name: "open fds", color: palette[4], points: healthPoints.map { ($0.0, Double($0.1.openFileDescriptors)) }),
            ]
        ).render()

        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>xmppload — \(esc(summary.profile)) — \(esc(summary.runID))</title>
            \(style)</head><body>
            \(body)
            <p class="meta">Latencies come from HDR histograms (1 µs – 1 h, 3 significant digits) and count from each action's intended start; service times count from the actual send. Bytes are counted on the wire, below TLS.</p>
            </body></html>

            """
    }

    static func tables(_ summary: RunSummary) -> String {
        let s = summary.sessions
        let m = summary.messages
        let g = summary.generator
        var html = "<div class=\"cards\">"
        let resumption: [(String, String)] =
            (s.resumed ?? 0) + (s.resumeFailed ?? 0) > 0
            ? [("streams resumed", "\(s.resumed ?? 0)"), ("resumes refused", "\(s.resumeFailed ?? 0)")] : []
        for (label, value) in [
            ("sessions started", "\(s.started)"), ("logged in", "\(s.loggedIn)"), ("failed", "\(s.failed)"),
            ("peak concurrent", "\(s.peakConcurrent)"), ("reconnects", "\(s.reconnects ?? 0)"), ("messages sent", "\(m.sent)"),
            ("received", "\(m.received)"),
            ("lost", summary.lossJudgedByReport ? RunSummary.lossJudgedByReportText : "\(m.lost)"), ("duplicated", "\(m.duplicated)"),
            ("bytes sent", TextReport.formatBytes(summary.bytes.sent)),
            ("bytes received", TextReport.formatBytes(summary.bytes.received)), ("dropped arrivals", "\(g.droppedArrivals)"),
        ] + resumption {
            html += "<div class=\"card\"><b>\(esc(value))</b><span>\(esc(label))</span></div>"
        }
        html +=
            "</div><h2>Latency (ms)</h2><table><tr><th>metric</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>service p99</th></tr>"
        // Per-path logins have their own table (`loginPathsSection`).
        for name in TextReport.orderedMetrics(Array(summary.latencyMilliseconds.keys)) where !name.hasPrefix(LoginPathSummary.metricPrefix) {
            guard let p = summary.latencyMilliseconds[name] else { continue }
            let service = summary.serviceLatencyMilliseconds[name].map { TextReport.formatMs($0.p99) } ?? ""
            html +=
                "<tr><td\(name.hasPrefix("login.") ? " class=\"sub\"" : "")>\(esc(name))</td><td>\(p.count)</td><td>\(TextReport.formatMs(p.p50))</td><td>\(TextReport.formatMs(p.p90))</td><td>\(TextReport.formatMs(p.p99))</td><td>\(TextReport.formatMs(p.p999))</td><td>\(TextReport.formatMs(p.max))</td><td>\(service)</td></tr>"
        }
        html += "</table>"
        if !summary.rooms.isEmpty {
            html +=
                "<h2>Group chat fan-out per room</h2><table><tr><th>room</th><th>sent</th><th>receipts expected</th><th>received</th><th>complete</th></tr>"
            for (room, fanout) in summary.rooms.sorted(by: { ($0.value.completeness, $0.key) < ($1.value.completeness, $1.key) }).prefix(50) {
                html +=
                    "<tr><td>\(esc(room))</td><td>\(fanout.sent)</td><td>\(fanout.expected)</td><td>\(fanout.received)</td><td>\(String(format: "%.2f", fanout.completeness * 100)) %</td></tr>"
            }
            html += "</table>"
        }
        if !summary.errors.isEmpty {
            html += "<h2>Errors</h2><table><tr><th>kind</th><th>count</th><th>the server's text (first seen)</th><th>hint</th></tr>"
            for (kind, count) in summary.errors.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
                let example = esc(summary.errorExamples?[kind] ?? "")
                html += "<tr><td>\(esc(kind))</td><td>\(count)</td><td>\(example)</td><td>\(esc(ErrorHint.hint(for: kind) ?? ""))</td></tr>"
            }
            html += "</table>"
        }
        html +=
            "<h2>Generator</h2><table><tr><th>cpu seconds</th><th>peak rss</th><th>max loop lag ms</th><th>dropped arrivals</th><th>saturated intervals</th></tr>"
        html +=
            "<tr><td>\(String(format: "%.1f", g.cpuSeconds))</td><td>\(TextReport.formatBytes(g.peakRSSBytes))</td><td>\(TextReport.formatMs(g.maxLoopLagMilliseconds))</td><td>\(g.droppedArrivals)</td><td>\(g.saturatedIntervals)</td></tr></table>"
        return html
    }

    /// A percentile-spectrum chart: x is 100 / (100 − percentile) on a log axis, labelled p50 … p99.999.
    static func spectrumChart(title: String, series: [SVGChart.Series]) -> SVGChart {
        var chart = SVGChart(title: title, xLabel: "percentile", yLabel: "ms", series: series)
        chart.logX = true
        chart.xTickLabel = { value in
            let percentile = 100 - 100 / value
            return percentile == percentile.rounded() ? "p\(Int(percentile))" : "p\(String(format: "%g", percentile))"
        }
        chart.height = 300
        return chart
    }

    /// The report's inline CSS (shared with `CompareHTMLReport`).
    static let style = """
        <style>
        body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 980px; color: #0f172a; background: #fff; }
        h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 32px; border-bottom: 1px solid #e2e8f0; padding-bottom: 4px; }
        .meta { color: #475569; margin-top: 0; } .warn { background: #fef3c7; border: 1px solid #f59e0b; padding: 8px 12px; border-radius: 6px; }
        table { border-collapse: collapse; margin: 12px 0; } th, td { padding: 3px 10px; border-bottom: 1px solid #e2e8f0; text-align: right; }
        th:first-child, td:first-child { text-align: left; } th { background: #f8fafc; } td.sub { padding-left: 24px; color: #334155; }
        .cards { display: flex; flex-wrap: wrap; gap: 10px; } .card { border: 1px solid #e2e8f0; border-radius: 8px; padding: 8px 14px; min-width: 120px; }
        .card b { display: block; font-size: 20px; } .card span { color: #64748b; font-size: 12px; }
        svg { display: block; margin: 16px 0; max-width: 100%; height: auto; } svg .title { font-weight: 600; font-size: 13px; fill: #0f172a; }
        svg .tick, svg .legend, svg .label { font-size: 11px; fill: #475569; } svg .grid { stroke: #e2e8f0; } svg .axis { stroke: #94a3b8; }
        svg .series { fill: none; stroke-width: 2; } svg .band { fill: #fecaca; fill-opacity: 0.55; } .empty { color: #94a3b8; }
        table.transcript td { text-align: left; vertical-align: top; } table.transcript code { white-space: pre-wrap; word-break: break-all; font-size: 12px; }
        .regressed { color: #b91c1c; font-weight: 600; } .improved { color: #15803d; font-weight: 600; } .bad { background: #fee2e2; border: 1px solid #ef4444; padding: 8px 12px; border-radius: 6px; }
        </style>
        """

    static func esc(_ text: String) -> String { SVGChart.escape(text) }
}
