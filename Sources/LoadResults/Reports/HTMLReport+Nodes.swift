/// The HTML report's per-node tables (runs with more than one endpoint) and the generator hints.
extension HTMLReport {
    /// Per node: logins, login percentiles, service p99, errors; then the sender-node × receiver-node
    /// message matrix with p50 / p99 / count per cell. Empty for a single-server run.
    static func nodesSection(_ nodes: NodeSummary?) -> String {
        guard let nodes, !nodes.labels.isEmpty else { return "" }
        let f = TextReport.formatMs
        var html =
            "<h2>Server nodes</h2><table><tr><th>node</th><th>logins</th><th>login p50</th><th>p90</th><th>p99</th><th>max</th><th>service p99</th><th>errors</th></tr>"
        for label in nodes.labels {
            let node = nodes.nodes[label]
            let login = node?.login
            html += "<tr><td>\(esc(label))</td><td>\(node?.loggedIn ?? 0)</td>"
            html += [login?.p50, login?.p90, login?.p99, login?.max, node?.serviceLogin?.p99].map { "<td>\($0.map(f) ?? "–")</td>" }.joined()
            let errors = node?.errors.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" } ?? []
            html += "<td>\(node?.errorCount ?? 0)\(errors.isEmpty ? "" : " (" + esc(errors.prefix(3).joined(separator: ", ")) + ")")</td></tr>"
        }
        html += "</table>"
        let phases = Array(Set(nodes.nodes.values.flatMap(\.phases.keys)))
        if !phases.isEmpty {
            let ordered = TextReport.loginPhases.filter(phases.contains) + phases.filter { !TextReport.loginPhases.contains($0) }.sorted()
            html += "<table><tr><th>login phase p50 / p99 (ms)</th>" + nodes.labels.map { "<th>\(esc($0))</th>" }.joined() + "</tr>"
            for phase in ordered {
                html += "<tr><td>\(esc(phase))</td>"
                for label in nodes.labels {
                    let cell = nodes.nodes[label]?.phases[phase]
                    html += "<td>\(cell.map { "\(f($0.p50)) / \(f($0.p99))" } ?? "–")</td>"
                }
                html += "</tr>"
            }
            html += "</table>"
        }
        guard !nodes.messageMatrix.isEmpty else { return html }
        let counts = nodes.messageCounts
        html +=
            "<h2>Message latency by node</h2><p class=\"meta\">One-to-one messages from send to receipt, ms: p50 / p99 (count). Rows: the sender's node; columns: the receiver's. \(counts.total) messages, \(counts.crossNode) across nodes.</p>"
        html += "<table><tr><th>sender \\ receiver</th>" + nodes.labels.map { "<th>\(esc($0))</th>" }.joined() + "</tr>"
        for sender in nodes.labels {
            html += "<tr><td>\(esc(sender))</td>"
            for receiver in nodes.labels {
                let cell = nodes.messageMatrix[sender]?[receiver]
                html += "<td>\(cell.map { "\(f($0.p50)) / \(f($0.p99)) (\($0.count))" } ?? "–")</td>"
            }
            html += "</tr>"
        }
        return html + "</table>"
    }

    /// The generator hints (`ConnectionHint`) as a warning box; empty when there are none.
    static func hintsSection(_ hints: [String]?) -> String {
        guard let hints, !hints.isEmpty else { return "" }
        return "<div class=\"warn\"><b>What to do</b><ul>" + hints.map { "<li>\(esc($0))</li>" }.joined() + "</ul></div>"
    }
}
