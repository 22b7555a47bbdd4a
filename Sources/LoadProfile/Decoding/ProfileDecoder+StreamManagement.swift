import Yams

extension ProfileDecoder {
    /// `stream_management: true`, or `stream_management: {resume: true, request_every: 5}`.
    mutating func decodeStreamManagement(_ node: Node) -> StreamManagement? {
        if case .scalar = node {
            guard let on = bool(node, "stream_management") else { return nil }
            return on ? StreamManagement() : nil
        }
        guard let map = mapping(node, "stream_management") else { return nil }
        checkKeys(map, allowed: ["resume", "request_every"], "stream_management")
        var settings = StreamManagement()
        if let value = map["resume"], let resume = bool(value, "stream_management.resume") { settings.resume = resume }
        if let value = map["request_every"], let every = int(value, "stream_management.request_every", minimum: 1, maximum: 10_000) {
            settings.requestEvery = every
        }
        return settings
    }
}
