import Foundation

/// The human-readable summary of a run (stdout at the end of `run`, and `report`): sessions, latency
/// percentiles per metric with the login phase breakdown, messages, bytes, errors, generator health.
public enum TextReport {
    /// Login phases in the order they happen, for the breakdown table.
    public static let loginPhases = [
        "login.connect", "login.tls", "login.features", "login.register", "login.sasl",
        "login.bind", "login.session", "login.resume",
    ]

    public static func render(_ summary: RunSummary) -> String {
        var out = ""
        func line(_ text: String = "") { out += text + "\n" }
        line("xmppload run \(summary.runID) — \(summary.profile) — \(String(format: "%.1f", summary.durationSeconds)) s (\(summary.stopReason))")
        let s = summary.sessions
        line(
            "sessions   started \(s.started)  logged in \(s.loggedIn)  failed \(s.failed)  completed \(s.completed)  peak concurrent \(s.peakConcurrent)"
                + ((s.reconnects ?? 0) > 0 ? "  reconnects \(s.reconnects ?? 0) (logged in again \(s.reconnected ?? 0))" : "")
                + ((s.churned ?? 0) > 0 ? "  churned \(s.churned ?? 0)" : "")
                + ((s.resumed ?? 0) + (s.resumeFailed ?? 0) > 0
                    ? "  resumed \(s.resumed ?? 0) (refused \(s.resumeFailed ?? 0), stanzas never acknowledged \(s.unacknowledgedStanzas ?? 0))"
                    : ""))
        let m = summary.messages
        line(
            "messages   sent \(m.sent)  received \(m.received)  lost \(summary.lossJudgedByReport ? RunSummary.lossJudgedByReportText : "\(m.lost)")"
                + "  duplicated \(m.duplicated)  reordered \(m.reordered)"
                + (m.groupchatSent > 0 ? "  groupchat sent \(m.groupchatSent) received \(m.groupchatReceived)" : ""))
        line("bytes      sent \(formatBytes(summary.bytes.sent))  received \(formatBytes(summary.bytes.received)) (on the wire)")
        if let t = summary.transports {
            line(
                "transports tcp \(t.tcp)  websocket \(t.webSocket)  bosh \(t.bosh) (connections)  http requests \(t.httpRequests)  responses \(t.httpResponses)"
            )
        }
        line()
        line("latency (ms, from the intended start; service time in brackets = from the actual send)")
        line(
            pad("metric", 22) + pad("count", 9, right: true) + pad("p50", 11, right: true) + pad("p90", 11, right: true)
                + pad("p99", 11, right: true) + pad("p99.9", 11, right: true) + pad("max", 11, right: true) + "   service p99")
        let ordered = orderedMetrics(Array(summary.latencyMilliseconds.keys))
        // Per-path logins have their own table (below).
        for name in ordered where !name.hasPrefix(LoginPathSummary.metricPrefix) {
            guard let p = summary.latencyMilliseconds[name] else { continue }
            let service = summary.serviceLatencyMilliseconds[name].map { "[\(formatMs($0.p99))]" } ?? ""
            let label = name.hasPrefix("login.") ? "  " + name : name
            line(
                pad(label, 22) + pad(String(p.count), 9, right: true) + pad(formatMs(p.p50), 11, right: true)
                    + pad(formatMs(p.p90), 11, right: true) + pad(formatMs(p.p99), 11, right: true)
                    + pad(formatMs(p.p999), 11, right: true) + pad(formatMs(p.max), 11, right: true) + "   " + service)
        }
        out += renderLoginPaths(summary.loginPaths)
        if !summary.rooms.isEmpty {
            let fanout = summary.rooms.values
            let expected = fanout.reduce(0) { $0 + $1.expected }
            let received = fanout.reduce(0) { $0 + $1.received }
            let worst = summary.rooms.min { ($0.value.completeness, $0.key) < ($1.value.completeness, $1.key) }!
            line()
            line(
                "group chat \(summary.rooms.count) rooms: receipts \(received) of \(expected) expected (\(String(format: "%.2f", expected == 0 ? 100 : Double(received) / Double(expected) * 100)) %); least complete \(worst.key) \(String(format: "%.2f", worst.value.completeness * 100)) %"
            )
        }
        if !summary.errors.isEmpty {
            line()
            line("errors")
            for (kind, count) in summary.errors.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
                line("  " + pad(kind, 32) + String(count))
                if let example = summary.errorExamples?[kind] { line("    server: \(example)") }
                if let hint = ErrorHint.hint(for: kind) { line("    hint: \(hint)") }
            }
        }
        if let failures = summary.loginFailures, !failures.isEmpty {
            line()
            line(
                "login failures by phase  "
                    + LoginFailures.orderedPhases(failures).map { "\($0) \(failures[$0]!.values.reduce(0, +))" }.joined(separator: "  "))
            for phase in LoginFailures.orderedPhases(failures) {
                let kinds = failures[phase]!
                line(
                    "  " + pad(phase, 10)
                        + kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                if let hint = LoginFailureHint.hint(phase: phase, kinds: kinds) { line("    hint: \(hint)") }
            }
        }
        out += renderNodes(summary.nodes)
        if let writes = summary.intervalWrites {
            line()
            line("results: \(writes.sentence)")
        }
        let g = summary.generator
        line()
        line(
            "generator  cpu \(String(format: "%.1f", g.cpuSeconds)) s  peak rss \(formatBytes(g.peakRSSBytes))  max loop lag \(formatMs(g.maxLoopLagMilliseconds)) ms  dropped arrivals \(g.droppedArrivals)"
        )
        if g.saturated {
            line(
                "WARNING: the generator saturated in \(g.saturatedIntervals) interval(s) (loop lag p99 > \(Int(GeneratorHealth.lagLimitMilliseconds)) ms or CPU > \(Int(GeneratorHealth.cpuLimitFraction * 100)) %):"
            )
            line("         those latencies measure the generator, not the server.")
        }
        out += renderHints(summary.hints)
        out += renderServer(summary)
        if let notices = summary.notices, !notices.isEmpty {
            out += "\nserver notices\n" + notices.map { "  \($0.kind) ×\($0.count): \($0.text)\n" }.joined()
        }
        // Verdict: the run's own outcome, thresholds and trend findings (RunSummary+Verdict).
        if !summary.verdictText.isEmpty { out += "\n" + summary.verdictText }
        // Outages, lost messages inside vs outside their windows, RSS over the load's end (RunSummary+Outages).
        if !summary.outageText.isEmpty { out += "\n" + summary.outageText }
        if let events = summary.controlEvents, !events.isEmpty {
            out += "\ncontrol (changes made through --control-port)\n" + events.map { "  \($0.listing)\n" }.joined()
        }
        return out
    }

    /// A merged result's report: the summary's, preceded by every generator's endpoint when the
    /// result merges several (`xmppload report DIR...`).
    public static func render(_ results: MergedResults) -> String {
        let endpoints = results.endpoints
        guard endpoints.count > 1 else { return render(results.summary) }
        return "merged from \(endpoints.count) generators:\n" + endpoints.map { "  \($0)\n" }.joined() + render(results.summary)
    }

    /// login, its phases, then the other metrics alphabetically.
    public static func orderedMetrics(_ names: [String]) -> [String] {
        var result: [String] = []
        if names.contains("login") { result.append("login") }
        result += loginPhases.filter(names.contains)
        result += names.filter { $0 != "login" && !loginPhases.contains($0) }.sorted()
        return result
    }

    public static func formatMs(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    public static func formatBytes(_ bytes: UInt64) -> String {
        let value = Double(bytes)
        if value >= 1_073_741_824 { return String(format: "%.2f GiB", value / 1_073_741_824) }
        if value >= 1_048_576 { return String(format: "%.1f MiB", value / 1_048_576) }
        if value >= 1024 { return String(format: "%.1f KiB", value / 1024) }
        return "\(bytes) B"
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text + " " }
        let padding = String(repeating: " ", count: width - text.count)
        return right ? padding + text : text + padding
    }
}
