/// The text report's per-node section (runs with more than one endpoint) and the generator hints.
extension TextReport {
    /// Per node: logins, login p50/p99 (from the intended start), the slowest phase's p99 and errors;
    /// then the message matrix, one row per sender node, each cell `p50/p99 (count)` in ms. Empty for a
    /// single-server run.
    public static func renderNodes(_ nodes: NodeSummary?) -> String {
        guard let nodes, !nodes.labels.isEmpty else { return "" }
        var out = "\nserver nodes (login latency in ms, from the intended start)\n"
        out += pad("node", 26) + pad("logins", 9, right: true) + pad("p50", 11, right: true) + pad("p99", 11, right: true)
        out += pad("service p99", 13, right: true) + "   slowest phase p99   errors\n"
        for label in nodes.labels {
            let node = nodes.nodes[label]
            let slowest = node?.phases.max { ($0.value.p99, $1.key) < ($1.value.p99, $0.key) }
            out += pad(label, 26) + pad(String(node?.loggedIn ?? 0), 9, right: true)
            out += pad(node?.login.map { formatMs($0.p50) } ?? "-", 11, right: true)
            out += pad(node?.login.map { formatMs($0.p99) } ?? "-", 11, right: true)
            out += pad(node?.serviceLogin.map { formatMs($0.p99) } ?? "-", 13, right: true)
            out += "   " + pad(slowest.map { "\($0.key) \(formatMs($0.value.p99))" } ?? "-", 20)
            out += errorText(node?.errors ?? [:]) + "\n"
        }
        guard !nodes.messageMatrix.isEmpty else { return out }
        let counts = nodes.messageCounts
        out += "\nmessage latency by node (ms, send to receipt: p50/p99 (count); rows: sender's node, columns: receiver's)"
        out += " — \(counts.total) messages, \(counts.crossNode) across nodes\n"
        let width = 26
        out += pad("sender \\ receiver", width) + nodes.labels.map { pad($0, width, right: true) }.joined() + "\n"
        for sender in nodes.labels {
            out += pad(sender, width)
            for receiver in nodes.labels {
                let cell = nodes.messageMatrix[sender]?[receiver]
                out += pad(cell.map { "\(formatMs($0.p50))/\(formatMs($0.p99)) (\($0.count))" } ?? "-", width, right: true)
            }
            out += "\n"
        }
        return out
    }

    /// The hints of `ConnectionHint`, one paragraph per kind; empty when there are none.
    public static func renderHints(_ hints: [String]?) -> String {
        guard let hints, !hints.isEmpty else { return "" }
        return "\nhints\n" + hints.map { "  \($0)\n" }.joined()
    }

    private static func errorText(_ errors: [String: UInt64]) -> String {
        guard !errors.isEmpty else { return "0" }
        let total = errors.values.reduce(0, +)
        let kinds = errors.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(3).map { "\($0.key) \($0.value)" }
        return "\(total) (" + kinds.joined(separator: ", ") + (errors.count > 3 ? ", …" : "") + ")"
    }
}
