import Yams

/// `servers:` — the run's endpoints in the `--server` syntax, checked when the file is loaded.
extension ProfileDecoder {
    /// Each entry is `HOST:PORT[,weight=W]`, a `ws://`, `wss://`, `http://` or `https://` URL with an
    /// optional `,weight=W`, or a mapping `{server: …, weight: W}`; `${name}` takes the file's
    /// `variables:`. Every bad entry is reported at its place: a malformed placeholder, an unknown
    /// variable, or what `WeightedEndpoint.parse` says of the text rendered with the file's values.
    mutating func decodeServers(_ node: Node, variables: [String: String]) -> [ServerEntry] {
        guard let list = sequence(node, "servers") else { return [] }
        if list.count == 0 {
            problem(
                node, "servers is empty", hint: "list HOST:PORT or URL entries, or remove `servers:` to use --server, XMPPLOAD_SERVERS or DNS SRV")
        }
        var entries: [ServerEntry] = []
        for item in list {
            guard let (text, place) = serverText(item) else { continue }
            let template: Template
            do {
                template = try Template(parsing: text)
            } catch {
                problem(place, "servers: '\(text)': \(error.message)")
                continue
            }
            let entry = ServerEntry(text: template, location: location(place))
            var unknown: [String] = []
            for name in template.variables where variables[name] == nil && !unknown.contains(name) { unknown.append(name) }
            for name in unknown {
                problem(
                    place, "servers: undefined variable '${\(name)}'",
                    hint: Self.closest(to: name, in: Array(variables.keys)).map { "did you mean '${\($0)}'?" }
                        ?? "define it under this file's `variables:` (session variables such as ${index} do not apply to servers)")
            }
            if unknown.isEmpty {
                do { _ = try entry.endpoint(variables: variables) } catch { problems += error.problems }
            }
            entries.append(entry)
        }
        return entries
    }

    /// The `--server` text of one entry and the node to report it at: a scalar as written, a mapping
    /// `{server, weight}` joined as `SERVER,weight=W` (so one parser reads both forms).
    private mutating func serverText(_ item: Node) -> (String, Node)? {
        switch item {
        case .scalar:
            return string(item, "a servers entry").map { ($0, item) }
        case .mapping(let map):
            checkKeys(map, allowed: ["server", "weight"], "a servers entry")
            guard let serverNode = map["server"] else {
                problem(item, "a servers entry needs 'server' (HOST:PORT or a URL)")
                return nil
            }
            guard let server = string(serverNode, "server") else { return nil }
            guard let weightNode = map["weight"] else { return (server, serverNode) }
            guard let weight = string(weightNode, "weight") else { return nil }
            if server.contains(",") {
                problem(weightNode, "servers: '\(server)' has options and a 'weight' key", hint: "give the weight once")
                return nil
            }
            return ("\(server),weight=\(weight)", serverNode)
        default:
            problem(
                item, "a servers entry is HOST:PORT[,weight=W], a URL, or {server: …, weight: W}",
                hint: item.sequence != nil ? "found a list" : nil)
            return nil
        }
    }
}
