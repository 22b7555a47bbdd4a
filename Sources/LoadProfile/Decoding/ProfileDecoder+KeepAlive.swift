import Yams

extension ProfileDecoder {
    /// `keepalive: {ping: 60s}` or `keepalive: {whitespace: 60s}`.
    mutating func decodeKeepAlive(_ node: Node) -> KeepAlive? {
        guard let map = mapping(node, "keepalive") else { return nil }
        let kinds = KeepAlive.Kind.allCases.map(\.rawValue)
        checkKeys(map, allowed: kinds, "keepalive")
        let given = KeepAlive.Kind.allCases.filter { map[$0.rawValue] != nil }
        guard given.count == 1, let kind = given.first, let valueNode = map[kind.rawValue] else {
            problem(node, "keepalive takes one of \(kinds.joined(separator: ", "))", hint: "e.g. `keepalive: {ping: 60s}`")
            return nil
        }
        guard let interval = duration(valueNode, "keepalive.\(kind.rawValue)") else { return nil }
        return KeepAlive(kind: kind, interval: interval)
    }
}
