import Foundation

extension HTMLReport {
    /// `limited by server: login p99 10.6 s: server-bound — …`, highlighted when a side limited the run.
    static func limitParagraph(_ summary: RunSummary) -> String {
        guard let limit = summary.limit else { return "" }
        let style = limit.limitedBy == .server || limit.limitedBy == .generator ? "warn" : "meta"
        return "<p class=\"\(style)\"><b>limited by \(esc(limit.limitedBy.rawValue))</b>: \(esc(limit.evidence))</p>"
    }

    /// The server beside the load (`--monitor`): each source summed up, the costs per unit of load,
    /// and charts on the load's time axis — process CPU against the cores it can use, resident
    /// memory, and each kept series (counters as rates). Gaps break the lines; restarts are marked.
    /// Empty without monitors.
    static func serverSection(_ results: MergedResults) -> String {
        let summary = results.summary
        let timeline = results.monitor
        guard let monitors = summary.monitors, !monitors.sources.isEmpty else { return "" }
        var html = "<h2>Server (--monitor)</h2>"
        html += "<table><tr><th>source</th><th>watched</th><th>cpu mean / max</th><th>rss start → end (max)</th><th>gaps</th></tr>"
        for (label, source) in monitors.sources.sorted(by: { $0.key < $1.key }) {
            let process = source.process
            let cpu = process.map { String(format: "%.0f %% / %.0f %% of %d core(s)", $0.cpuMeanPercent, $0.cpuMaxPercent, $0.usableCores) } ?? "–"
            let rss =
                process.map {
                    "\(TextReport.formatBytes($0.rssStartBytes)) → \(TextReport.formatBytes($0.rssEndBytes)) (\(TextReport.formatBytes($0.rssMaxBytes)))"
                } ?? (source.series.map { "\($0.count) series" } ?? "–")
            let reasons = (source.gapReasons ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            html +=
                "<tr><td>\(esc(label))</td><td>\(esc(source.spec))</td><td>\(esc(cpu))</td><td>\(esc(rss))</td>"
                + "<td>\(source.gaps) of \(source.intervals)\(reasons.isEmpty ? "" : " (\(esc(reasons)))")</td></tr>"
        }
        html += "</table>"
        if let costs = summary.serverCosts, !costs.isEmpty {
            html +=
                "<table><tr><th>server costs (marginal)</th><th>CPU per login</th><th>CPU per message</th><th>memory per online session</th><th>note</th></tr>"
            for cost in costs {
                html +=
                    "<tr><td>\(esc(cost.source))</td><td>\(cost.cpuPerLoginMilliseconds.map { TextReport.formatMs($0) + " ms" } ?? "–")</td>"
                    + "<td>\(cost.cpuPerMessageMilliseconds.map { TextReport.formatMs($0) + " ms" } ?? "–")</td>"
                    + "<td>\(cost.rssPerSessionBytes.map { TextReport.formatBytes(UInt64(max(0, $0.rounded()))) } ?? "–")</td>"
                    + "<td>\(esc(cost.note ?? ""))</td></tr>"
            }
            html += "</table>"
        }
        let intervals = timeline.intervals
        let markers = timeline.events.map { (x: $0.at, label: $0.text) }
        let processes = timeline.processLabels
        if !processes.isEmpty {
            // x is each interval's end, as on the load's charts.
            var series: [SVGChart.Series] = []
            for (index, label) in processes.enumerated() {
                let color = palette[index % palette.count]
                series.append(
                    .init(name: "\(label) cpu %", color: color, points: intervals.map { ($0.end, $0.sources[label]?.process?.cpuPercent ?? .nan) }))
                let cores = intervals.compactMap { $0.sources[label]?.process?.usableCores }.max() ?? 1
                series.append(
                    .init(
                        name: "\(label) usable (\(cores) core\(cores == 1 ? "" : "s"))", color: "#94a3b8",
                        points: intervals.map { ($0.end, $0.sources[label]?.process.map { Double($0.usableCores) * 100 } ?? .nan) }))
                if intervals.contains(where: { ($0.sources[label]?.process?.runQueueWaitPercent ?? 0) >= 1 }) {
                    series.append(
                        .init(
                            name: "\(label) waiting for a CPU %", color: palette[(index + 3) % palette.count],
                            points: intervals.map { ($0.end, $0.sources[label]?.process.map { $0.runQueueWaitPercent ?? 0 } ?? .nan) }))
                }
            }
            var cpu = SVGChart(title: "Server CPU (% of one core) against the cores it can use", xLabel: "seconds", yLabel: "%", series: series)
            cpu.markers = markers
            html += cpu.render()
            var memory = SVGChart(
                title: "Server resident memory", xLabel: "seconds", yLabel: "MiB",
                series: processes.enumerated().map { index, label in
                    .init(
                        name: "\(label) rss MiB", color: palette[index % palette.count],
                        points: intervals.map { ($0.end, $0.sources[label]?.process.map { Double($0.rssBytes) / 1_048_576 } ?? .nan) })
                })
            memory.markers = markers
            html += memory.render()
        }
        for label in timeline.charted.keys.sorted() {
            let keys = timeline.charted[label] ?? []
            // One chart per family (the name before `{`): node_exporter's CPU modes share one.
            var families: [String: [String]] = [:]
            for key in keys { families[String(key.split(separator: "{", maxSplits: 1).first ?? Substring(key)), default: []].append(key) }
            for family in families.keys.sorted(by: {
                MonitorTimeline.rank($0) == MonitorTimeline.rank($1) ? $0 < $1 : MonitorTimeline.rank($0) < MonitorTimeline.rank($1)
            }) {
                let members = families[family] ?? []
                let isCounter = intervals.contains { interval in members.contains { interval.sources[label]?.series?.increases[$0] != nil } }
                var chart = SVGChart(
                    title: "\(label): \(family)\(isCounter ? " (per second)" : "")", xLabel: "seconds", yLabel: isCounter ? "/s" : "value",
                    series: members.enumerated().map { index, key in
                        let name = key == family ? family : String(key.dropFirst(family.count))
                        return .init(
                            name: name, color: palette[index % palette.count],
                            points: intervals.map { interval in
                                guard let sample = interval.sources[label]?.series else { return (interval.end, .nan) }
                                return (interval.end, isCounter ? (sample.rate(key) ?? .nan) : (sample.gauges[key] ?? .nan))
                            })
                    })
                chart.height = 200
                chart.markers = markers
                html += chart.render()
            }
            if let more = timeline.unchartedCount[label], more > 0 {
                html +=
                    "<p class=\"meta\">\(esc(label)): \(more) more series are in intervals.jsonl (charts show the first \(MonitorTimeline.maxChartedSeries)).</p>"
            }
        }
        return html
    }
}
