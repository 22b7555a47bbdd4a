import Yams

/// The `presence` and `roster` steps: their forms (available, directed, unavailable, subscribe;
/// get, add, remove) decoded into a `StepAction` and its metric name.
extension ProfileDecoder {
    static func presenceName(_ action: StepAction) -> String {
        guard case .presence(let presence) = action else { return "presence" }
        switch presence {
        case .available: return "presence"
        case .directed: return "presence.directed"
        case .unavailable: return "presence.unavailable"
        case .subscribe: return "presence.subscribe"
        case .unsubscribe: return "presence.unsubscribe"
        }
    }

    mutating func decodePresence(_ value: Node?, node: Node) -> StepAction? {
        guard let value, !Self.isNull(value) else { return .presence(.available(show: nil, status: nil, priority: nil)) }
        if case .scalar(let scalar) = value {
            switch scalar.string {
            case "available", "initial": return .presence(.available(show: nil, status: nil, priority: nil))
            case "unavailable": return .presence(.unavailable(status: nil))
            default:
                problem(value, "presence must be available, unavailable or a mapping, got '\(scalar.string)'")
                return nil
            }
        }
        guard let map = mapping(value, "presence") else { return nil }
        checkKeys(map, allowed: ["show", "status", "priority", "to", "type"], "presence")
        let show = map["show"].flatMap { oneOf($0, "presence.show", ["away", "chat", "dnd", "xa"]) }
        let status = map["status"].flatMap { template($0, "presence.status") }
        let priority = map["priority"].flatMap { int($0, "presence.priority", minimum: -128, maximum: 127) }
        let type = map["type"].flatMap {
            oneOf($0, "presence.type", ["unavailable", "probe", "subscribe", "subscribed", "unsubscribe", "unsubscribed"])
        }
        if let toNode = map["to"] {
            guard let to = template(toNode, "presence.to") else { return nil }
            return .presence(.directed(to: to, type: type, show: show, status: status))
        }
        if type == "unavailable" { return .presence(.unavailable(status: status)) }
        if let type, let typeNode = map["type"] { problem(typeNode, "presence type '\(type)' needs 'to'") }
        return .presence(.available(show: show, status: status, priority: priority))
    }

    mutating func decodeRoster(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, !Self.isNull(value) else { return (.roster(.get), "roster.get") }
        if case .scalar(let scalar) = value {
            if scalar.string == "get" { return (.roster(.get), "roster.get") }
            problem(
                value, "roster must be get, or one of add / rename / remove with settings",
                hint: "e.g. `roster: {add: {jid: \"user${index}@${domain}\"}}`")
            return nil
        }
        guard let map = mapping(value, "roster") else { return nil }
        checkKeys(map, allowed: ["get", "add", "rename", "remove"], "roster")
        guard map.count == 1, let (keyNode, inner) = map.first, let key = keyNode.string else {
            problem(value, "roster takes exactly one of get, add, rename, remove")
            return nil
        }
        switch key {
        case "get": return (.roster(.get), "roster.get")
        case "remove":
            guard let jid = template(inner, "roster.remove") else { return nil }
            return (.roster(.remove(jid: jid)), "roster.remove")
        case "add", "rename":
            guard let itemMap = mapping(inner, "roster.\(key)") else { return nil }
            checkKeys(itemMap, allowed: key == "add" ? ["jid", "name", "groups"] : ["jid", "name"], "roster.\(key)")
            guard let jidNode = itemMap["jid"] else {
                problem(inner, "roster.\(key) needs 'jid'")
                return nil
            }
            guard let jid = template(jidNode, "roster.\(key).jid") else { return nil }
            let name = itemMap["name"].flatMap { template($0, "roster.\(key).name") }
            if key == "rename" {
                guard let name else {
                    problem(inner, "roster.rename needs 'name'")
                    return nil
                }
                return (.roster(.rename(jid: jid, name: name)), "roster.rename")
            }
            var groups: [String] = []
            if let groupsNode = itemMap["groups"], let list = sequence(groupsNode, "roster.add.groups") {
                groups = list.compactMap { string($0, "a group") }
            }
            return (.roster(.add(jid: jid, name: name, groups: groups)), "roster.add")
        default:
            return nil
        }
    }
}
