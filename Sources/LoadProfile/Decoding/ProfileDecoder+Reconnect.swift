import Yams

extension ProfileDecoder {
    /// `reconnect: {attempts: N, initial: 1s, max: 30s}`, or `reconnect: N` (attempts, default delays).
    mutating func decodeReconnect(_ node: Node) -> ReconnectPolicy? {
        var policy = ReconnectPolicy()
        if case .scalar = node {
            guard let attempts = int(node, "reconnect", minimum: 0, maximum: Self.maximumCount) else { return nil }
            policy.attempts = attempts
            return policy
        }
        guard let map = mapping(node, "reconnect") else { return nil }
        checkKeys(map, allowed: ["attempts", "initial", "max"], "reconnect")
        guard let attemptsNode = map["attempts"] else {
            problem(node, "reconnect needs 'attempts'", hint: "e.g. `reconnect: {attempts: 10, initial: 1s, max: 30s}`")
            return nil
        }
        guard let attempts = int(attemptsNode, "reconnect.attempts", minimum: 0, maximum: Self.maximumCount) else { return nil }
        policy.attempts = attempts
        if let initial = map["initial"].flatMap({ duration($0, "reconnect.initial") }) { policy.initialDelay = initial }
        if let max = map["max"].flatMap({ duration($0, "reconnect.max") }) { policy.maxDelay = max }
        if policy.maxDelay < policy.initialDelay, let maxNode = map["max"] {
            problem(maxNode, "reconnect.max is shorter than reconnect.initial")
        }
        return policy
    }
}
