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
}
