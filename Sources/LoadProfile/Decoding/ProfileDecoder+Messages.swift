import Yams

/// Message bodies, `message` step settings and think times: the values several steps share.
extension ProfileDecoder {
    mutating func decodeBody(_ map: Node.Mapping, _ node: Node) -> MessageBody? {
        switch (map["body"], map["body_size"]) {
        case (.some, .some):
            problem(node, "give either 'body' or 'body_size', not both")
            return nil
        case (.some(let bodyNode), nil):
            return template(bodyNode, "body").map { .literal($0) }
        case (nil, .some(let sizeNode)):
            return int(sizeNode, "body_size", maximum: Self.maximumBodySize).map { .size($0) }
        case (nil, nil):
            return .size(64)
        }
    }

    mutating func decodeMessage(_ map: Node.Mapping, _ node: Node) -> MessageAction? {
        checkKeys(map, allowed: ["to", "body", "body_size", "type", "count", "interval"], "message")
        var target = MessageTarget.randomOnline
        if let toNode = map["to"], let text = string(toNode, "message.to") {
            switch text {
            case "random": target = .randomOnline
            case "next": target = .next
            case "self": target = .selfJID
            default:
                guard let jid = template(toNode, "message.to") else { return nil }
                if !text.contains("@") && !text.contains("${") {
                    problem(toNode, "message.to '\(text)' is not a JID", hint: "use random, next, self or a JID like user${index}@${domain}")
                }
                target = .jid(jid)
            }
        } else if map["to"] == nil {
            problem(node, "message needs 'to'", hint: "to: random | next | self | a JID")
            return nil
        }
        let body = decodeBody(map, node)
        var type = MessageType.chat
        if let typeNode = map["type"], let text = oneOf(typeNode, "message.type", MessageType.allCases.map(\.rawValue)) {
            type = MessageType(rawValue: text)!
            if type == .groupchat { problem(typeNode, "groupchat messages go to a room", hint: "use a muc_send step") }
        }
        let count = map["count"].flatMap { int($0, "message.count", maximum: Self.maximumCount) } ?? 1
        let interval = map["interval"].flatMap { decodeThink($0) }
        guard let body else { return nil }
        return MessageAction(to: target, body: body, type: type, count: count, interval: interval)
    }

    mutating func decodeThink(_ node: Node) -> ThinkTime? {
        if case .scalar = node { return duration(node, "think", allowZero: true).map { .constant($0) } }
        guard let map = mapping(node, "think") else { return nil }
        checkKeys(map, allowed: ["constant", "uniform", "exponential", "max"], "think")
        let kinds = ["constant", "uniform", "exponential"].filter { map[$0] != nil }
        if kinds.count > 1 {
            problem(
                node, "think takes one of constant, uniform, exponential; found \(kinds.joined(separator: " and "))",
                hint: "write one distribution per think time")
            return nil
        }
        if let cap = map["max"], map["exponential"] == nil {
            problem(cap, "think.max caps an exponential think time only", hint: "e.g. `{exponential: 2s, max: 10s}`")
        }
        if let value = map["constant"] { return duration(value, "think.constant", allowZero: true).map { .constant($0) } }
        if let value = map["uniform"] {
            guard let list = sequence(value, "think.uniform"), list.count == 2 else {
                if case .sequence = value { problem(value, "think.uniform takes [low, high]") }
                return nil
            }
            guard let low = duration(list[0], "think.uniform low", allowZero: true),
                let high = duration(list[1], "think.uniform high", allowZero: true)
            else { return nil }
            if low > high {
                problem(
                    value, "think.uniform range is inverted: \(DurationText.format(low)) > \(DurationText.format(high))", hint: "write [low, high]")
                return nil
            }
            return .uniform(low, high)
        }
        if let value = map["exponential"] {
            guard let mean = duration(value, "think.exponential mean") else { return nil }
            let cap = map["max"].flatMap { duration($0, "think.max") }
            if let cap, cap < mean { problem(map["max"], "think.max is below the mean") }
            return .exponential(mean: mean, max: cap)
        }
        problem(node, "think needs constant, uniform or exponential", hint: "e.g. `think: 2s` or `think: {uniform: [1s, 3s]}`")
        return nil
    }
}
