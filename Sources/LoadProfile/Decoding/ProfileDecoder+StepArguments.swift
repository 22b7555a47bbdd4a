import Yams

/// Step arguments: what each stanza step kind (login, queries, raw, subscriptions, message, MUC,
/// wait, think) accepts after its key, decoded into its `StepAction` and metric name.
extension ProfileDecoder {
    mutating func decodeLoginStep(_ value: Node?) -> (StepAction, String)? {
        if Self.isNull(value) { return (.login(loginDefaults), "login") }
        let (options, resourceSet) = decodeLoginOptions(value!)
        return (.login(options.merged(over: loginDefaults, resourceSet: resourceSet)), "login")
    }

    /// `ping`, `disco_info`, `version`, `vcard`: an optional target (`to`).
    mutating func decodeQueryStep(_ key: String, _ value: Node?, _ make: (Template?) -> IQAction) -> (StepAction, String)? {
        var to: Template?
        if let value, !Self.isNull(value) {
            if case .mapping(let map) = value {
                checkKeys(map, allowed: ["to"], key)
                to = map["to"].flatMap { template($0, "\(key).to") }
            } else {
                to = template(value, "\(key) target")
            }
        }
        return (.iq(make(to)), "iq.\(key)")
    }

    mutating func decodeRawStep(_ value: Node?) -> (StepAction, String)? {
        guard let value else { return nil }
        if case .mapping(let map) = value {
            checkKeys(map, allowed: ["xml", "expect_result"], "raw")
            guard let xmlNode = map["xml"] else {
                problem(value, "raw needs 'xml'")
                return nil
            }
            guard let xml = template(xmlNode, "raw.xml") else { return nil }
            let expect = map["expect_result"].flatMap { bool($0, "raw.expect_result") } ?? xml.variables.contains("id")
            return (.iq(.raw(xml: xml, expectResult: expect)), "iq.raw")
        }
        guard let xml = template(value, "raw") else { return nil }
        return (.iq(.raw(xml: xml, expectResult: xml.variables.contains("id"))), "iq.raw")
    }

    mutating func decodeSubscriptionStep(_ key: String, _ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, let jid = template(value, key) else {
            problem(node, "\(key) needs a JID")
            return nil
        }
        return (.presence(key == "subscribe" ? .subscribe(to: jid) : .unsubscribe(to: jid)), "presence.\(key)")
    }

    mutating func decodeMessageStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, let map = mapping(value, "message") else {
            problem(node, "message needs settings", hint: "e.g. `message: {to: random, body_size: 100}`")
            return nil
        }
        return decodeMessage(map, value).map { (.message($0), "message") }
    }

    mutating func decodeMUCJoinStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value else {
            problem(node, "muc_join needs a room")
            return nil
        }
        if case .mapping(let map) = value {
            checkKeys(map, allowed: ["room", "service", "nick", "history"], "muc_join")
            guard let roomNode = map["room"], let room = template(roomNode, "muc_join.room") else {
                if map["room"] == nil { problem(value, "muc_join needs 'room'", hint: "e.g. room: \"load-${index/50}\"") }
                return nil
            }
            return (
                .muc(
                    .join(
                        room: room, service: map["service"].flatMap { template($0, "muc_join.service") },
                        nick: map["nick"].flatMap { template($0, "muc_join.nick") },
                        history: map["history"].flatMap { int($0, "muc_join.history", minimum: 0) })), "muc.join"
            )
        }
        guard let room = template(value, "muc_join room") else { return nil }
        return (.muc(.join(room: room, service: nil, nick: nil, history: nil)), "muc.join")
    }

    mutating func decodeMUCSendStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, let map = mapping(value, "muc_send") else {
            problem(node, "muc_send needs settings")
            return nil
        }
        checkKeys(map, allowed: ["body", "body_size", "count", "interval"], "muc_send")
        let body = decodeBody(map, value)
        let count = map["count"].flatMap { int($0, "muc_send.count", maximum: Self.maximumCount) } ?? 1
        let interval = map["interval"].flatMap { decodeThink($0) }
        return body.map { (.muc(.send(body: $0, count: count, interval: interval)), "muc.send") }
    }

    mutating func decodeMUCNickStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, let nick = template(value, "muc_nick") else {
            problem(node, "muc_nick needs a nickname")
            return nil
        }
        return (.muc(.changeNick(nick)), "muc.nick")
    }

    mutating func decodeWaitStep(_ value: Node?) -> (StepAction, String)? {
        var condition = WaitCondition()
        if let value, !Self.isNull(value) {
            guard let map = mapping(value, "wait") else { return nil }
            checkKeys(map, allowed: ["for", "type", "from", "timeout"], "wait")
            if let node = map["for"] { condition.element = oneOf(node, "wait.for", ["message", "presence", "iq"]) }
            if let node = map["type"] { condition.type = string(node, "wait.type") }
            if let node = map["from"] { condition.from = template(node, "wait.from") }
            if let node = map["timeout"], let timeout = duration(node, "wait.timeout") { condition.timeout = timeout }
        }
        return (.wait(condition), "wait")
    }

    mutating func decodeThinkStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, let think = decodeThink(value) else {
            if value == nil { problem(node, "think needs a duration") }
            return nil
        }
        return (.think(think), "think")
    }

}
