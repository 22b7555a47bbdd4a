import Foundation
import Yams

/// Walks a composed YAML node tree (not Codable: nodes carry their line and column) into profile
/// values, collecting every problem instead of stopping at the first. See docs/PROFILES.md for the
/// format.
struct ProfileDecoder {
    let file: String
    private(set) var problems: [ProfileProblem] = []
    /// Templates seen, with where they were, for the undefined-variable check at the end.
    private var templates: [(Template, SourceLocation)] = []

    /// Variables the engine provides to every session.
    static let engineVariables = ["index", "user", "domain", "jid", "resource", "seq", "run_id", "session", "room", "nick", "random", "id", "prev_index", "next_index"]

    static let topLevelKeys = ["name", "description", "login", "repeat", "step_timeout", "variables", "steps", "load", "mix"]
    static let stepModifiers = ["name", "on_error", "timeout"]
    static let actionKeys = ["login", "logout", "stay_online", "presence", "subscribe", "unsubscribe", "roster", "message",
                             "muc_join", "muc_send", "muc_nick", "muc_leave", "ping", "disco_info", "version", "vcard",
                             "raw", "wait", "think", "repeat", "choose"]
    static let actionsWithoutLogin: Set<String> = ["login", "think", "repeat", "choose"]
    static let bareActions = ["login", "logout", "stay_online", "muc_leave", "ping", "disco_info", "version", "vcard"]

    init(file: String) { self.file = file }

    // MARK: - Problems and locations

    func location(_ node: Node?) -> SourceLocation {
        guard let mark = node?.mark else { return SourceLocation(file: file, line: 1, column: 1) }
        return SourceLocation(file: file, line: mark.line, column: mark.column)
    }

    mutating func problem(_ node: Node?, _ message: String, hint: String? = nil) {
        problems.append(ProfileProblem(location: location(node), message: message, hint: hint))
    }

    func yamlProblem(_ error: any Error) -> ProfileProblem {
        if let error = error as? YamlError {
            switch error {
            case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
                 .composer(let context, let problem, let mark, _):
                return ProfileProblem(location: SourceLocation(file: file, line: mark.line, column: mark.column),
                                      message: "YAML syntax: \(problem)" + (context.map { " (\($0.text))" } ?? ""),
                                      hint: "check indentation and quoting around this place")
            default:
                break
            }
        }
        return ProfileProblem(location: SourceLocation(file: file, line: 1, column: 1), message: "YAML: \(error)")
    }

    // MARK: - Scalars

    mutating func mapping(_ node: Node, _ what: String) -> Node.Mapping? {
        guard case .mapping(let mapping) = node else {
            problem(node, "\(what) must be a mapping (key: value)", hint: shapeHint(node))
            return nil
        }
        return mapping
    }

    mutating func sequence(_ node: Node, _ what: String) -> Node.Sequence? {
        guard case .sequence(let sequence) = node else {
            problem(node, "\(what) must be a list", hint: "write each item on its own line starting with '- '")
            return nil
        }
        return sequence
    }

    private func shapeHint(_ node: Node) -> String? {
        switch node {
        case .scalar: return "found a single value"
        case .sequence: return "found a list"
        default: return nil
        }
    }

    /// Reports keys not in `allowed`, with a did-you-mean.
    mutating func checkKeys(_ mapping: Node.Mapping, allowed: [String], _ what: String) {
        for (key, _) in mapping {
            guard let name = key.string else {
                problem(key, "\(what): keys must be plain names")
                continue
            }
            if !allowed.contains(name) {
                let suggestion = Self.closest(to: name, in: allowed)
                problem(key, "unknown key '\(name)' in \(what)",
                        hint: suggestion.map { "did you mean '\($0)'?" } ?? "allowed: \(allowed.joined(separator: ", "))")
            }
        }
    }

    mutating func string(_ node: Node, _ what: String) -> String? {
        guard case .scalar(let scalar) = node else {
            problem(node, "\(what) must be a single value", hint: shapeHint(node))
            return nil
        }
        return scalar.string
    }

    mutating func int(_ node: Node, _ what: String, minimum: Int = 1) -> Int? {
        guard let text = string(node, what) else { return nil }
        guard let value = Int(text) else {
            problem(node, "\(what) must be a whole number, got '\(text)'")
            return nil
        }
        guard value >= minimum else {
            problem(node, "\(what) must be at least \(minimum), got \(value)")
            return nil
        }
        return value
    }

    mutating func number(_ node: Node, _ what: String, minimum: Double = 0, exclusive: Bool = false) -> Double? {
        guard let text = string(node, what) else { return nil }
        guard let value = Double(text), value.isFinite else {
            problem(node, "\(what) must be a number, got '\(text)'")
            return nil
        }
        if value < minimum || (exclusive && value == minimum) {
            problem(node, "\(what) must be \(exclusive ? "greater than" : "at least") \(Self.format(minimum)), got \(Self.format(value))",
                    hint: value < 0 ? "negative values make no sense here" : nil)
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node, _ what: String) -> Bool? {
        guard let text = string(node, what) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            problem(node, "\(what) must be true or false, got '\(text)'")
            return nil
        }
    }

    mutating func duration(_ node: Node, _ what: String, allowZero: Bool = false) -> Duration? {
        guard let text = string(node, what) else { return nil }
        guard let value = DurationText.parse(text) else {
            problem(node, "\(what): '\(text)' is not a duration", hint: "write e.g. 500ms, 30s, 2m, 1h30m")
            return nil
        }
        if value == .zero && !allowZero {
            problem(node, "\(what) must be longer than zero")
            return nil
        }
        return value
    }

    mutating func template(_ node: Node, _ what: String) -> Template? {
        guard let text = string(node, what) else { return nil }
        do {
            let template = try Template(parsing: text)
            templates.append((template, location(node)))
            return template
        } catch {
            problem(node, "\(what): \(error.message)")
            return nil
        }
    }

    mutating func oneOf(_ node: Node, _ what: String, _ choices: [String]) -> String? {
        guard let text = string(node, what) else { return nil }
        guard choices.contains(text) else {
            problem(node, "\(what) must be one of \(choices.joined(separator: ", ")), got '\(text)'",
                    hint: Self.closest(to: text, in: choices).map { "did you mean '\($0)'?" })
            return nil
        }
        return text
    }

    // MARK: - Run definition

    mutating func decodeRunDefinition(_ node: Node, bytes: [UInt8], depth: Int) -> RunDefinition? {
        guard let root = mapping(node, "a profile") else { return nil }
        checkKeys(root, allowed: Self.topLevelKeys, "the profile")
        let plan = root["load"].flatMap { decodeLoad($0) }
        if let mixNode = root["mix"] {
            for key in ["steps", "login", "repeat", "step_timeout"] where root[key] != nil {
                problem(root[key], "'\(key)' has no effect in a mix file", hint: "put it in the profiles the mix lists")
            }
            let profiles = decodeMix(mixNode, depth: depth)
            return profiles.map { RunDefinition(profiles: $0, plan: plan, source: file) }
        }
        guard let profile = decodeProfile(root) else { return nil }
        return RunDefinition(profiles: [WeightedProfile(weight: 1, profile: profile, path: file, bytes: bytes)], plan: plan, source: file)
    }

    mutating func decodeProfile(_ root: Node.Mapping) -> Profile? {
        let name = root["name"].flatMap { string($0, "name") } ?? URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let description = root["description"].flatMap { string($0, "description") } ?? ""
        var variables: [String: String] = [:]
        if let node = root["variables"], let map = mapping(node, "variables") {
            for (key, value) in map {
                guard let keyText = key.string, keyText.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    problem(key, "variable names are letters, digits and '_'")
                    continue
                }
                if Self.engineVariables.contains(keyText) {
                    problem(key, "'\(keyText)' is set by xmppload for every session and cannot be redefined")
                }
                if let text = string(value, "variable '\(keyText)'") { variables[keyText] = text }
            }
        }
        var login = LoginOptions()
        if let node = root["login"] { login = decodeLoginOptions(node).options }
        var repeatMode = RepeatMode.once
        if let node = root["repeat"], let text = oneOf(node, "repeat", ["once", "forever"]) { repeatMode = RepeatMode(rawValue: text)! }
        let stepTimeout = root["step_timeout"].flatMap { duration($0, "step_timeout") } ?? .seconds(30)

        guard let stepsNode = root["steps"] else {
            problem(nil, "the profile has no 'steps'", hint: "add `steps: [login, logout]` at least")
            return nil
        }
        var loggedIn = false
        var steps = decodeSteps(stepsNode, loggedIn: &loggedIn, defaults: login)
        if steps.isEmpty, problems.isEmpty { problem(stepsNode, "'steps' is empty", hint: "add at least `- login`") }
        // A profile whose last step leaves the session logged in gets an implicit logout.
        if loggedIn, !steps.contains(where: { if case .logout = $0.action { return true } else { return false } }) {
            steps.append(Step(name: "logout", action: .logout, location: location(stepsNode)))
        }
        checkVariables(known: Set(Self.engineVariables).union(variables.keys))
        return Profile(name: name, description: description, login: login, steps: steps, repeatMode: repeatMode,
                       variables: variables, stepTimeout: stepTimeout, source: file)
    }

    mutating func checkVariables(known: Set<String>) {
        for (template, location) in templates {
            for name in template.variables where !known.contains(name) {
                problems.append(ProfileProblem(location: location, message: "undefined variable '${\(name)}'",
                                               hint: Self.closest(to: name, in: Array(known)).map { "did you mean '${\($0)}'?" }
                                                   ?? "define it under `variables:` or use one of: \(Self.engineVariables.joined(separator: ", "))"))
            }
        }
        templates.removeAll()
    }

    mutating func decodeLoginOptions(_ node: Node) -> (options: LoginOptions, resourceSet: Bool) {
        var options = LoginOptions()
        var resourceSet = false
        if case .scalar(let scalar) = node, scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" { return (options, false) }
        guard let map = mapping(node, "login") else { return (options, false) }
        checkKeys(map, allowed: ["sasl", "tls", "resource", "register"], "login")
        if let value = map["sasl"], let text = string(value, "login.sasl") {
            if LoginOptions.mechanisms.contains(text.uppercased()) { options.mechanism = text.uppercased() }
            else { problem(value, "unknown SASL mechanism '\(text)'", hint: "use one of \(LoginOptions.mechanisms.joined(separator: ", "))") }
        }
        if let value = map["tls"], let text = oneOf(value, "login.tls", TLSMode.allCases.map(\.rawValue)) { options.tls = TLSMode(rawValue: text) }
        if let value = map["resource"], let resource = template(value, "login.resource") {
            options.resource = resource
            resourceSet = true
        }
        if let value = map["register"], let flag = bool(value, "login.register") { options.register = flag }
        return (options, resourceSet)
    }

    // MARK: - Steps

    mutating func decodeSteps(_ node: Node, loggedIn: inout Bool, defaults: LoginOptions) -> [Step] {
        guard let list = sequence(node, "steps") else { return [] }
        var steps: [Step] = []
        for item in list {
            if let step = decodeStep(item, loggedIn: &loggedIn, defaults: defaults) { steps.append(step) }
        }
        return steps
    }

    mutating func decodeStep(_ node: Node, loggedIn: inout Bool, defaults: LoginOptions) -> Step? {
        let actionKey: String
        let value: Node?
        var modifiers: Node.Mapping?
        switch node {
        case .scalar(let scalar):
            actionKey = scalar.string
            value = nil
            guard Self.actionKeys.contains(actionKey) else {
                problem(node, "unknown step '\(actionKey)'", hint: Self.closest(to: actionKey, in: Self.actionKeys).map { "did you mean '\($0)'?" }
                            ?? "steps are: \(Self.actionKeys.joined(separator: ", "))")
                return nil
            }
            guard Self.bareActions.contains(actionKey) else {
                problem(node, "step '\(actionKey)' needs settings", hint: "write `\(actionKey): …`")
                return nil
            }
        case .mapping(let map):
            let actions = map.compactMap { key, _ in key.string.flatMap { Self.actionKeys.contains($0) ? $0 : nil } }
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
        if !Self.actionsWithoutLogin.contains(actionKey) && !loggedIn {
            if actionKey == "logout" {
                problem(node, "'logout' before 'login'", hint: "add `- login` before it")
            } else {
                problem(node, "a \(actionKey) step before login", hint: "add `- login` before it: stanzas need a logged-in session")
            }
        }
        guard let (action, defaultName) = decodeAction(actionKey, value, node: node, loggedIn: &loggedIn, defaults: defaults) else { return nil }
        switch action {
        case .login: loggedIn = true
        case .logout: loggedIn = false
        default: break
        }
        var step = Step(name: defaultName, action: action, location: stepLocation)
        if let modifiers {
            if let nameNode = modifiers["name"], let name = string(nameNode, "name") {
                if name.isEmpty { problem(nameNode, "a step name cannot be empty") } else { step.name = name }
            }
            if let policy = modifiers["on_error"], let text = oneOf(policy, "on_error", ["stop", "continue"]) { step.onError = ErrorPolicy(rawValue: text)! }
            if let timeout = modifiers["timeout"] { step.timeout = duration(timeout, "timeout") }
        }
        return step
    }

    private static func isNull(_ node: Node?) -> Bool {
        guard let node else { return true }
        if case .scalar(let scalar) = node { return scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" }
        return false
    }

    mutating func decodeAction(_ key: String, _ value: Node?, node: Node, loggedIn: inout Bool,
                               defaults: LoginOptions) -> (StepAction, String)? {
        switch key {
        case "login":
            if Self.isNull(value) { return (.login(defaults), "login") }
            let (options, resourceSet) = decodeLoginOptions(value!)
            return (.login(options.merged(over: defaults, resourceSet: resourceSet)), "login")
        case "logout": return (.logout, "logout")
        case "stay_online": return (.stayOnline, "stay_online")
        case "muc_leave": return (.muc(.leave), "muc.leave")
        case "ping", "disco_info", "version", "vcard":
            var to: Template?
            if let value, !Self.isNull(value) {
                if case .mapping(let map) = value {
                    checkKeys(map, allowed: ["to"], key)
                    to = map["to"].flatMap { template($0, "\(key).to") }
                } else {
                    to = template(value, "\(key) target")
                }
            }
            let action: IQAction
            switch key {
            case "ping": action = .ping(to: to)
            case "disco_info": action = .discoInfo(to: to)
            case "version": action = .version(to: to)
            default: action = .vcard(to: to)
            }
            return (.iq(action), "iq.\(key)")
        case "raw":
            guard let value else { return nil }
            if case .mapping(let map) = value {
                checkKeys(map, allowed: ["xml", "expect_result"], "raw")
                guard let xmlNode = map["xml"] else { problem(value, "raw needs 'xml'"); return nil }
                guard let xml = template(xmlNode, "raw.xml") else { return nil }
                let expect = map["expect_result"].flatMap { bool($0, "raw.expect_result") } ?? xml.variables.contains("id")
                return (.iq(.raw(xml: xml, expectResult: expect)), "iq.raw")
            }
            guard let xml = template(value, "raw") else { return nil }
            return (.iq(.raw(xml: xml, expectResult: xml.variables.contains("id"))), "iq.raw")
        case "presence":
            return decodePresence(value, node: node).map { ($0, Self.presenceName($0)) }
        case "subscribe", "unsubscribe":
            guard let value, let jid = template(value, key) else { problem(node, "\(key) needs a JID"); return nil }
            return (.presence(key == "subscribe" ? .subscribe(to: jid) : .unsubscribe(to: jid)), "presence.\(key)")
        case "roster":
            return decodeRoster(value, node: node)
        case "message":
            guard let value, let map = mapping(value, "message") else { problem(node, "message needs settings", hint: "e.g. `message: {to: random, body_size: 100}`"); return nil }
            return decodeMessage(map, value).map { (.message($0), "message") }
        case "muc_join":
            guard let value else { problem(node, "muc_join needs a room"); return nil }
            if case .mapping(let map) = value {
                checkKeys(map, allowed: ["room", "service", "nick", "history"], "muc_join")
                guard let roomNode = map["room"], let room = template(roomNode, "muc_join.room") else {
                    if map["room"] == nil { problem(value, "muc_join needs 'room'", hint: "e.g. room: \"load-${index/50}\"") }
                    return nil
                }
                return (.muc(.join(room: room, service: map["service"].flatMap { template($0, "muc_join.service") },
                                   nick: map["nick"].flatMap { template($0, "muc_join.nick") },
                                   history: map["history"].flatMap { int($0, "muc_join.history", minimum: 0) })), "muc.join")
            }
            guard let room = template(value, "muc_join room") else { return nil }
            return (.muc(.join(room: room, service: nil, nick: nil, history: nil)), "muc.join")
        case "muc_send":
            guard let value, let map = mapping(value, "muc_send") else { problem(node, "muc_send needs settings"); return nil }
            checkKeys(map, allowed: ["body", "body_size", "count", "interval"], "muc_send")
            let body = decodeBody(map, value)
            let count = map["count"].flatMap { int($0, "muc_send.count") } ?? 1
            let interval = map["interval"].flatMap { decodeThink($0) }
            return body.map { (.muc(.send(body: $0, count: count, interval: interval)), "muc.send") }
        case "muc_nick":
            guard let value, let nick = template(value, "muc_nick") else { problem(node, "muc_nick needs a nickname"); return nil }
            return (.muc(.changeNick(nick)), "muc.nick")
        case "wait":
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
        case "think":
            guard let value, let think = decodeThink(value) else { if value == nil { problem(node, "think needs a duration") }; return nil }
            return (.think(think), "think")
        case "repeat":
            guard let value, let map = mapping(value, "repeat") else { problem(node, "repeat needs settings", hint: "e.g. `repeat: {count: 10, steps: [...]}`"); return nil }
            checkKeys(map, allowed: ["count", "duration", "forever", "steps"], "repeat")
            var count: LoopCount?
            let given = ["count", "duration", "forever"].filter { map[$0] != nil }
            if given.count != 1 {
                problem(value, "repeat needs exactly one of count, duration, forever", hint: given.isEmpty ? "e.g. count: 10" : "found \(given.joined(separator: " and "))")
            } else if let node = map["count"] {
                count = int(node, "repeat.count").map { .times($0) }
            } else if let node = map["duration"] {
                count = duration(node, "repeat.duration").map { .duration($0) }
            } else if let node = map["forever"], let flag = bool(node, "repeat.forever") {
                if flag { count = .forever } else { problem(node, "repeat.forever: false repeats nothing", hint: "remove the repeat or use count") }
            }
            guard let stepsNode = map["steps"] else { problem(value, "repeat needs 'steps'"); return nil }
            let body = decodeSteps(stepsNode, loggedIn: &loggedIn, defaults: defaults)
            if body.isEmpty { problem(stepsNode, "repeat has no steps") }
            return count.map { (.loop($0, body), "repeat") }
        case "choose":
            guard let value, let list = sequence(value, "choose") else { problem(node, "choose needs branches"); return nil }
            var branches: [WeightedBranch] = []
            var after: Bool?
            for item in list {
                guard let map = mapping(item, "a choose branch") else { continue }
                checkKeys(map, allowed: ["weight", "steps"], "a choose branch")
                let weight = map["weight"].flatMap { number($0, "weight", minimum: 0, exclusive: true) }
                if map["weight"] == nil { problem(item, "a choose branch needs 'weight'") }
                var branchLoggedIn = loggedIn
                let steps = map["steps"].map { decodeSteps($0, loggedIn: &branchLoggedIn, defaults: defaults) } ?? []
                if map["steps"] == nil { problem(item, "a choose branch needs 'steps'") }
                after = (after ?? true) && branchLoggedIn
                if let weight { branches.append(WeightedBranch(weight: weight, steps: steps)) }
            }
            if list.count == 0 { problem(value, "choose has no branches") }
            if let after { loggedIn = after }
            return (.choose(branches), "choose")
        default:
            problem(node, "unknown step '\(key)'")
            return nil
        }
    }

    private static func presenceName(_ action: StepAction) -> String {
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
        let priority = map["priority"].flatMap { int($0, "presence.priority", minimum: -128) }
        let type = map["type"].flatMap { oneOf($0, "presence.type", ["unavailable", "probe", "subscribe", "subscribed", "unsubscribe", "unsubscribed"]) }
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
            problem(value, "roster must be get, or one of add / rename / remove with settings", hint: "e.g. `roster: {add: {jid: \"user${index}@${domain}\"}}`")
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
            guard let jidNode = itemMap["jid"] else { problem(inner, "roster.\(key) needs 'jid'"); return nil }
            guard let jid = template(jidNode, "roster.\(key).jid") else { return nil }
            let name = itemMap["name"].flatMap { template($0, "roster.\(key).name") }
            if key == "rename" {
                guard let name else { problem(inner, "roster.rename needs 'name'"); return nil }
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
            return int(sizeNode, "body_size").map { .size($0) }
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
        let count = map["count"].flatMap { int($0, "message.count") } ?? 1
        let interval = map["interval"].flatMap { decodeThink($0) }
        guard let body else { return nil }
        return MessageAction(to: target, body: body, type: type, count: count, interval: interval)
    }

    mutating func decodeThink(_ node: Node) -> ThinkTime? {
        if case .scalar = node { return duration(node, "think", allowZero: true).map { .constant($0) } }
        guard let map = mapping(node, "think") else { return nil }
        checkKeys(map, allowed: ["constant", "uniform", "exponential", "max"], "think")
        if let value = map["constant"] { return duration(value, "think.constant", allowZero: true).map { .constant($0) } }
        if let value = map["uniform"] {
            guard let list = sequence(value, "think.uniform"), list.count == 2 else {
                if case .sequence = value { problem(value, "think.uniform takes [low, high]") }
                return nil
            }
            guard let low = duration(list[0], "think.uniform low", allowZero: true),
                  let high = duration(list[1], "think.uniform high", allowZero: true) else { return nil }
            if low > high {
                problem(value, "think.uniform range is inverted: \(DurationText.format(low)) > \(DurationText.format(high))", hint: "write [low, high]")
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

    // MARK: - Load

    mutating func decodeLoad(_ node: Node) -> LoadPlan? {
        guard let map = mapping(node, "load") else { return nil }
        checkKeys(map, allowed: ["phases", "duration_cap", "graceful_stop", "seed"], "load")
        var plan = LoadPlan(phases: [])
        if let value = map["seed"], let text = string(value, "seed") {
            if let seed = UInt64(text) { plan.seed = seed } else { problem(value, "seed must be a non-negative whole number") }
        }
        if let value = map["duration_cap"] { plan.durationCap = duration(value, "duration_cap") }
        if let value = map["graceful_stop"], let grace = duration(value, "graceful_stop", allowZero: true) { plan.gracefulStop = grace }
        guard let phasesNode = map["phases"] else {
            problem(node, "load needs 'phases'", hint: "e.g. phases: [{users: 100, ramp: 10s, duration: 1m}]")
            return nil
        }
        guard let list = sequence(phasesNode, "load.phases") else { return nil }
        for (index, item) in list.enumerated() {
            if let phase = decodePhase(item, index: index) { plan.phases.append(phase) }
        }
        if list.count == 0 { problem(phasesNode, "load.phases is empty") }
        return plan.phases.isEmpty ? nil : plan
    }

    mutating func decodePhase(_ node: Node, index: Int) -> LoadPhase? {
        guard let map = mapping(node, "a load phase") else { return nil }
        checkKeys(map, allowed: ["name", "users", "ramp", "rate", "duration", "max_sessions"], "a load phase")
        let name = map["name"].flatMap { string($0, "phase name") } ?? "phase\(index + 1)"
        let duration = map["duration"].flatMap { self.duration($0, "phase duration") }
        let maxSessions = map["max_sessions"].flatMap { int($0, "max_sessions") }
        var model: LoadModel?
        switch (map["users"], map["rate"]) {
        case (.some, .some):
            problem(node, "a phase is closed (users) or open (rate), not both", hint: "split it into two phases")
            return nil
        case (nil, nil):
            problem(node, "a phase needs 'users' (closed model) or 'rate' (open model)")
            return nil
        case (.some(let users), nil):
            if case .mapping(let range) = users {
                checkKeys(range, allowed: ["from", "to"], "users")
                guard let from = range["from"].flatMap({ int($0, "users.from", minimum: 0) }),
                      let to = range["to"].flatMap({ int($0, "users.to", minimum: 1) }) else {
                    if range["from"] == nil || range["to"] == nil { problem(users, "users needs from and to") }
                    return nil
                }
                if to < from { problem(users, "users ramp goes down (\(from) → \(to))", hint: "closed users can only ramp up; end the phase instead") }
                if duration == nil { problem(node, "a ramping-users phase needs 'duration'") }
                if map["ramp"] != nil { problem(map["ramp"], "'ramp' is for a fixed number of users; a from/to phase ramps over its duration") }
                model = .rampingUsers(from: from, to: to)
            } else if let count = int(users, "users") {
                let ramp = map["ramp"].flatMap { self.duration($0, "ramp", allowZero: true) } ?? .zero
                if let duration, ramp > duration { problem(map["ramp"], "ramp is longer than the phase", hint: "make duration at least \(DurationText.format(ramp))") }
                model = .closed(users: count, ramp: ramp)
            }
        case (nil, .some(let rate)):
            if map["ramp"] != nil { problem(map["ramp"], "'ramp' is for closed phases; an open phase ramps with rate: {from, to}") }
            if case .mapping(let range) = rate {
                checkKeys(range, allowed: ["from", "to"], "rate")
                let from = range["from"].flatMap { number($0, "rate.from") }
                let to = range["to"].flatMap { number($0, "rate.to") }
                if range["from"] == nil || range["to"] == nil { problem(rate, "rate needs from and to") }
                if let from, let to {
                    if from == 0 && to == 0 { problem(rate, "a rate from 0 to 0 starts nothing") }
                    model = .openRamping(from: from, to: to)
                }
            } else if let value = number(rate, "rate", minimum: 0, exclusive: true) {
                model = .openConstant(rate: value)
            }
            if duration == nil { problem(node, "an open phase needs 'duration'") }
        }
        guard let model else { return nil }
        if case .closed(_, let ramp) = model, duration == nil {
            return LoadPhase(name: name, model: model, duration: ramp, maxSessions: maxSessions, open: true)
        }
        guard let duration else { return nil }
        return LoadPhase(name: name, model: model, duration: duration, maxSessions: maxSessions)
    }

    // MARK: - Mix

    mutating func decodeMix(_ node: Node, depth: Int) -> [WeightedProfile]? {
        guard let list = sequence(node, "mix") else { return nil }
        if depth > 2 { problem(node, "mixes nest too deep", hint: "a mix lists profiles, not other mixes"); return nil }
        var result: [WeightedProfile] = []
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        for item in list {
            guard let map = mapping(item, "a mix entry") else { continue }
            checkKeys(map, allowed: ["profile", "weight"], "a mix entry")
            let weight = map["weight"].flatMap { number($0, "weight", minimum: 0, exclusive: true) }
            if map["weight"] == nil { problem(item, "a mix entry needs 'weight'") }
            guard let pathNode = map["profile"], let relative = string(pathNode, "profile") else {
                if map["profile"] == nil { problem(item, "a mix entry needs 'profile' (a file path)") }
                continue
            }
            let path = relative.hasPrefix("/") ? relative : directory.appendingPathComponent(relative).path
            guard let data = FileManager.default.contents(atPath: path) else {
                problem(pathNode, "cannot read profile '\(relative)'", hint: "paths are relative to \(directory.path)")
                continue
            }
            do {
                let nested = try ProfileLoader.load(yaml: String(decoding: data, as: UTF8.self), file: path, bytes: Array(data), depth: depth + 1)
                if nested.profiles.count != 1 { problem(pathNode, "'\(relative)' is itself a mix", hint: "list its profiles here instead") }
                if let weight, let profile = nested.profiles.first {
                    result.append(WeightedProfile(weight: weight, profile: profile.profile, path: path, bytes: Array(data)))
                }
            } catch {
                problems.append(contentsOf: error.problems)
            }
        }
        if list.count == 0 { problem(node, "mix is empty") }
        return result.isEmpty ? nil : result
    }

    // MARK: - Helpers

    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let (best, score) = scored, score <= max(2, word.count / 3) else { return nil }
        return best
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension Node {
    /// The scalar's text, or nil for mappings and sequences.
    var string: String? {
        if case .scalar(let scalar) = self { return scalar.string }
        return nil
    }
}
