import Yams

/// Steps: each item of `steps` (and of `repeat` and `choose` bodies) into a `Step`, with the order
/// checks (nothing before `login`, nothing after the session ends).
extension ProfileDecoder {

    /// Decodes a list of steps starting from `flow`, and leaves `flow` where the last step leaves the
    /// session. Reports (once per list) the first step that can never run.
    mutating func decodeSteps(_ node: Node, flow: inout SessionFlow) -> [Step] {
        guard let list = sequence(node, "steps") else { return [] }
        var steps: [Step] = []
        var reportedUnreachable = false
        for item in list {
            if case .ended(let ending) = flow, !reportedUnreachable {
                // The stop logs the session out anyway, so an explicit logout after stay_online is fine.
                let explicitLogout = ending != "logout" && Self.actionKey(of: item) == "logout"
                if !explicitLogout {
                    let (message, hint) = SessionFlow.unreachable(after: ending)
                    problem(item, message, hint: hint)
                    reportedUnreachable = true
                }
            }
            if let step = decodeStep(item, flow: &flow) { steps.append(step) }
        }
        return steps
    }

    /// The action key of a step item, when it has exactly one known action.
    static func actionKey(of node: Node) -> String? {
        switch node {
        case .scalar(let scalar):
            return StepKind.byKey[scalar.string] != nil ? scalar.string : nil
        case .mapping(let map):
            let keys = map.compactMap { key, _ in key.string.flatMap { StepKind.byKey[$0] != nil ? $0 : nil } }
            return keys.count == 1 ? keys[0] : nil
        default:
            return nil
        }
    }

    mutating func decodeStep(_ node: Node, flow: inout SessionFlow) -> Step? {
        let actionKey: String
        let value: Node?
        var modifiers: Node.Mapping?
        switch node {
        case .scalar(let scalar):
            actionKey = scalar.string
            value = nil
            guard Self.actionKeys.contains(actionKey) else {
                problem(
                    node, "unknown step '\(actionKey)'",
                    hint: Self.closest(to: actionKey, in: Self.actionKeys).map { "did you mean '\($0)'?" }
                        ?? "steps are: \(Self.actionKeys.joined(separator: ", "))")
                return nil
            }
            guard StepKind.byKey[actionKey]?.mayBeBare == true else {
                problem(node, "step '\(actionKey)' needs settings", hint: "write `\(actionKey): …`")
                return nil
            }
        case .mapping(let map):
            let actions = map.compactMap { key, _ in key.string.flatMap { StepKind.byKey[$0] != nil ? $0 : nil } }
            let reported = problems.count
            checkKeys(map, allowed: Self.actionKeys + Self.stepModifiers, "a step")
            guard actions.count == 1, let key = actions.first else {
                if actions.isEmpty && problems.count > reported {
                    // The unknown key (with its did-you-mean) already says what is wrong.
                } else if actions.isEmpty {
                    problem(node, "a step needs exactly one action", hint: "steps are: \(Self.actionKeys.joined(separator: ", "))")
                } else {
                    problem(node, "a step has one action, found \(actions.joined(separator: " and "))", hint: "split it into several steps")
                }
                return nil
            }
            actionKey = key
            value = map[key]
            modifiers = map
        default:
            problem(node, "a step must be a name (like `login`) or a one-key mapping (like `think: 2s`)")
            return nil
        }

        let stepLocation = location(node)
        // Checked on the key, so a step whose settings are wrong is still reported as out of place.
        if flow == .loggedOut && StepKind.byKey[actionKey]?.needsLogin == true {
            if actionKey == "logout" {
                problem(node, "'logout' before 'login'", hint: "add `- login` before it")
            } else {
                problem(node, "a \(actionKey) step before login", hint: "add `- login` before it: stanzas need a logged-in session")
            }
        }
        if flow == .loggedIn && actionKey == "login" {
            problem(
                node, "already logged in: a session logs in once",
                hint: "remove this login; for a new session each time, end with logout and set `repeat: forever` at the top")
        }
        guard let (action, defaultName) = decodeAction(actionKey, value, node: node, flow: &flow) else { return nil }
        switch action {
        case .login: if flow == .loggedOut { flow = .loggedIn }
        case .logout: flow = .ended(by: "logout")
        case .stayOnline: if !flow.hasEnded { flow = .ended(by: "stay_online") }
        default: break
        }
        var step = Step(name: defaultName, action: action, location: stepLocation)
        if let modifiers {
            if let nameNode = modifiers["name"], let name = string(nameNode, "name") {
                if name.isEmpty { problem(nameNode, "a step name cannot be empty") } else { step.name = name }
            }
            if let policy = modifiers["on_error"], let text = oneOf(policy, "on_error", ["stop", "continue"]) {
                step.onError = ErrorPolicy(rawValue: text)!
            }
            if let timeout = modifiers["timeout"] { step.timeout = duration(timeout, "timeout") }
        }
        // A wait without its own timeout waits as long as any other step: the step's, else the profile's.
        if case .wait(var condition) = action, value?.mapping?["timeout"] == nil {
            condition.timeout = step.timeout ?? defaultStepTimeout
            step.action = .wait(condition)
        }
        return step
    }

    static func isNull(_ node: Node?) -> Bool {
        guard let node else { return true }
        if case .scalar(let scalar) = node { return scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" }
        return false
    }

    mutating func decodeAction(_ key: String, _ value: Node?, node: Node, flow: inout SessionFlow) -> (StepAction, String)? {
        guard let kind = StepKind.byKey[key] else {
            problem(node, "unknown step '\(key)'")
            return nil
        }
        return kind.decode(&self, value, node, &flow)
    }

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

    /// `repeat: {count | duration | forever, steps}`. The body is checked once from `flow`; a body that
    /// always ends the session can never come round again, which is reported.
    mutating func decodeRepeat(_ value: Node?, node: Node, flow: inout SessionFlow) -> (count: LoopCount, body: [Step])? {
        guard let value, let map = mapping(value, "repeat") else {
            problem(node, "repeat needs settings", hint: "e.g. `repeat: {count: 10, steps: [...]}`")
            return nil
        }
        checkKeys(map, allowed: ["count", "duration", "forever", "steps"], "repeat")
        var count: LoopCount?
        let given = ["count", "duration", "forever"].filter { map[$0] != nil }
        if given.count != 1 {
            problem(
                value, "repeat needs exactly one of count, duration, forever",
                hint: given.isEmpty ? "e.g. count: 10" : "found \(given.joined(separator: " and "))")
        } else if let node = map["count"] {
            count = int(node, "repeat.count", maximum: Self.maximumCount).map { .times($0) }
        } else if let node = map["duration"] {
            count = duration(node, "repeat.duration").map { .duration($0) }
        } else if let node = map["forever"], let flag = bool(node, "repeat.forever") {
            if flag { count = .forever } else { problem(node, "repeat.forever: false repeats nothing", hint: "remove the repeat or use count") }
        }
        guard let stepsNode = map["steps"] else {
            problem(value, "repeat needs 'steps'")
            return nil
        }
        let start = flow
        let body = decodeSteps(stepsNode, flow: &flow)
        if stepsNode.sequence?.isEmpty == true { problem(stepsNode, "repeat has no steps") }
        if case .ended(let ending) = flow, !start.hasEnded, count != .times(1) {
            problem(
                node, "the repeated steps end the session ('\(ending)'), so they never run a second time",
                hint: "move '\(ending)' after the repeat")
        }
        if count == .forever, !flow.hasEnded { flow = .ended(by: "repeat") }
        return count.map { ($0, body) }
    }

    /// `choose: [{weight, steps}, ...]`: each branch is checked from `flow`; afterwards the session is
    /// where the branches that go on leave it (`SessionFlow.merging`).
    mutating func decodeChoose(_ value: Node?, node: Node, flow: inout SessionFlow) -> [WeightedBranch]? {
        guard let value, let list = sequence(value, "choose") else {
            problem(node, "choose needs branches")
            return nil
        }
        var branches: [WeightedBranch] = []
        var outcomes: [SessionFlow] = []
        for item in list {
            guard let map = mapping(item, "a choose branch") else { continue }
            checkKeys(map, allowed: ["weight", "steps"], "a choose branch")
            let weight = map["weight"].flatMap { number($0, "weight", minimum: 0, exclusive: true) }
            if map["weight"] == nil { problem(item, "a choose branch needs 'weight'") }
            var branchFlow = flow
            let steps = map["steps"].map { decodeSteps($0, flow: &branchFlow) } ?? []
            if map["steps"] == nil { problem(item, "a choose branch needs 'steps'") }
            outcomes.append(branchFlow)
            if let weight { branches.append(WeightedBranch(weight: weight, steps: steps)) }
        }
        if list.isEmpty { problem(value, "choose has no branches") }
        flow = SessionFlow.merging(outcomes, from: flow)
        return branches
    }

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
