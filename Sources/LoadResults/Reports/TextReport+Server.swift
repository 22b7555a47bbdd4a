import Foundation

extension TextReport {
    /// The server's side of the text report (`--monitor`): each source summed up, then the costs per
    /// unit of load. "" when the run had no monitor. Who limited the run is in the verdict section.
    static func renderServer(_ summary: RunSummary) -> String {
        guard let monitors = summary.monitors, !monitors.sources.isEmpty else { return "" }
        var out = "\nserver (--monitor)\n"
        let width = max(10, (monitors.sources.keys.map(\.count).max() ?? 0) + 2)
        for (label, source) in monitors.sources.sorted(by: { $0.key < $1.key }) {
            var parts: [String] = [source.spec]
            if let process = source.process {
                let cores = process.usableCores == 1 ? "1 core" : "\(process.usableCores) cores"
                parts.append(
                    "cpu mean \(String(format: "%.0f", process.cpuMeanPercent)) %, max \(String(format: "%.0f", process.cpuMaxPercent)) % (\(String(format: "%.0f", process.cpuMaxPercentOfUsable)) % of \(cores))"
                )
                parts.append(
                    "rss \(formatBytes(process.rssStartBytes)) → \(formatBytes(process.rssEndBytes)) (max \(formatBytes(process.rssMaxBytes)))")
                if let fds = process.openFDsMax { parts.append("fds max \(fds)") }
            }
            if let series = source.series {
                parts.append("\(series.count) series")
                let overflows = series.filter { $0.key.hasPrefix("node_netstat_TcpExt_ListenOverflows") }.compactMap(\.value.total).reduce(0, +)
                if overflows > 0 { parts.append("listen-queue overflows \(String(format: "%.0f", overflows))") }
            }
            var gaps = "gaps \(source.gaps) of \(source.intervals)"
            if let reasons = source.gapReasons, !reasons.isEmpty {
                gaps += " (" + reasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
            }
            parts.append(gaps)
            out += "  " + pad(label, width) + parts.joined(separator: "  ") + "\n"
            for event in source.events ?? [] { out += "    at \(String(format: "%.0f", event.at)) s: \(event.text)\n" }
        }
        if let costs = summary.serverCosts, !costs.isEmpty {
            out += "server costs (marginal, fitted over this run's intervals)\n"
            for cost in costs { out += "  " + pad(cost.source, width) + costLine(cost) + "\n" + (cost.note.map { "    note: \($0)\n" } ?? "") }
        }
        return out
    }

    /// `CPU 3.9 ms per login, 0.71 ms per message (R² 0.99); memory 43.9 KiB per online session (R² 1.00)`.
    public static func costLine(_ cost: ServerCosts) -> String {
        var cpu: [String] = []
        if let login = cost.cpuPerLoginMilliseconds { cpu.append("\(formatMs(login)) ms per login") }
        if let message = cost.cpuPerMessageMilliseconds { cpu.append("\(formatMs(message)) ms per message") }
        var parts: [String] = []
        if !cpu.isEmpty { parts.append("CPU " + cpu.joined(separator: ", ") + (cost.cpuFitR2.map { String(format: " (R² %.2f)", $0) } ?? "")) }
        if let memory = cost.rssPerSessionBytes {
            parts.append(
                "memory \(formatBytes(UInt64(max(0, memory.rounded())))) per online session"
                    + (cost.rssFitR2.map { String(format: " (R² %.2f)", $0) } ?? ""))
        }
        return parts.isEmpty ? "no cost could be fitted (\(cost.intervalsUsed) intervals)" : parts.joined(separator: "; ")
    }
}
