import Foundation
import XMPPCore
import Yams

/// Walks a composed YAML node tree (not Codable: nodes carry their line and column) into profile
/// values, collecting every problem instead of stopping at the first. See docs/PROFILES.md for the
/// format.
struct ProfileDecoder {
    let file: String
    var problems: [ProfileProblem] = []
    /// Templates seen, with where they were, for the undefined-variable check at the end.
    var templates: [(Template, SourceLocation)] = []
    /// The profile's `login:` settings, the base of every login step's options.
    var loginDefaults = LoginOptions()
    /// The profile's `step_timeout`, also the default timeout of a `wait` step.
    var defaultStepTimeout: Duration = .seconds(30)

    /// Variables the engine provides to every session.
    static let engineVariables = SessionVariable.allCases.map(\.rawValue)

    static let topLevelKeys = [
        "name", "description", "login", "repeat", "reconnect", "keepalive", "stream_management", "step_timeout", "variables", "steps", "load", "mix",
        "thresholds", "servers", "transport", "churn",
    ]
    static let stepModifiers = ["name", "on_error", "timeout"]
    /// Every step key, in the order `check`'s hints list them (from `StepKind.table`).
    static let actionKeys = StepKind.table.map(\.key)

    /// Upper bounds that keep every computed value (arrival counts, offsets, bodies) far from overflow
    /// and from what any server or generator fleet could take.
    static let maximumUsers = 100_000_000
    static let maximumRate = 1_000_000.0
    static let maximumCount = 1_000_000
    static let maximumBodySize = 1_048_576

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
            case .duplicatedKeysInMapping(let duplicates, let context):
                let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
                return ProfileProblem(
                    location: SourceLocation(file: file, line: context.mark.line, column: context.mark.column),
                    message: "duplicate key \(keys) in one mapping",
                    hint: "each key may appear once; the later value would silently replace the earlier one")
            case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
                .composer(let context, let problem, let mark, _):
                return ProfileProblem(
                    location: SourceLocation(file: file, line: mark.line, column: mark.column),
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
                problem(
                    key, "unknown key '\(name)' in \(what)",
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

    mutating func int(_ node: Node, _ what: String, minimum: Int = 1, maximum: Int = .max) -> Int? {
        guard let text = string(node, what) else { return nil }
        guard let value = Int(text) else {
            problem(node, "\(what) must be a whole number, got '\(text)'")
            return nil
        }
        guard value >= minimum else {
            problem(node, "\(what) must be at least \(minimum), got \(value)")
            return nil
        }
        guard value <= maximum else {
            problem(node, "\(what) must be at most \(maximum), got \(value)")
            return nil
        }
        return value
    }

    mutating func number(
        _ node: Node, _ what: String, minimum: Double = 0, exclusive: Bool = false,
        maximum: Double = .greatestFiniteMagnitude
    ) -> Double? {
        guard let text = string(node, what) else { return nil }
        guard let value = Double(text), value.isFinite else {
            problem(node, "\(what) must be a number, got '\(text)'")
            return nil
        }
        if value < minimum || (exclusive && value == minimum) {
            problem(
                node, "\(what) must be \(exclusive ? "greater than" : "at least") \(Self.format(minimum)), got \(Self.format(value))",
                hint: value < 0 ? "negative values make no sense here" : nil)
            return nil
        }
        if value > maximum {
            problem(node, "\(what) must be at most \(Self.format(maximum)), got \(Self.format(value))")
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
            problem(
                node, "\(what) must be one of \(choices.joined(separator: ", ")), got '\(text)'",
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
        let thresholds = root["thresholds"].map { decodeThresholds($0) } ?? []
        // The file's own variables: a plain profile's, or a mix file's (only its `servers:` use them).
        let variables = root["variables"].map { decodeVariables($0) } ?? [:]
        let servers = root["servers"].map { decodeServers($0, variables: variables) } ?? []
        let churn = root["churn"].flatMap { decodeChurn($0) }
        if let mixNode = root["mix"] {
            for key in ["steps", "login", "repeat", "reconnect", "keepalive", "stream_management", "step_timeout", "transport"]
            where root[key] != nil {
                problem(root[key], "'\(key)' has no effect in a mix file", hint: "put it in the profiles the mix lists")
            }
            let profiles = decodeMix(mixNode, depth: depth)
            if let profiles { checkThresholdMetrics(thresholds, profiles: profiles) }
            return profiles.map {
                RunDefinition(
                    profiles: $0, plan: plan, thresholds: thresholds.map(\.threshold), servers: servers, variables: variables, churn: churn,
                    source: file)
            }
        }
        guard let profile = decodeProfile(root, variables: variables) else { return nil }
        let profiles = [WeightedProfile(weight: 1, profile: profile, path: file, bytes: bytes)]
        checkThresholdMetrics(thresholds, profiles: profiles)
        return RunDefinition(
            profiles: profiles, plan: plan, thresholds: thresholds.map(\.threshold),
            servers: servers, variables: variables, churn: churn, source: file)
    }

    /// `churn: RATE` or `churn: {rate: RATE, resume: P%}`: sessions dropped (and reconnected) per
    /// second across the run while the load runs, and the share of them that resume a resumable
    /// stream (`ChurnRate`).
    mutating func decodeChurn(_ node: Node) -> ChurnRate? {
        var rateNode = node
        var resumeShare: Double?
        if case .mapping = node {
            guard let map = mapping(node, "churn") else { return nil }
            checkKeys(map, allowed: ["rate", "resume"], "churn")
            guard let rate = map["rate"] else {
                problem(node, "churn needs a rate", hint: "write churn: {rate: 5/s} or churn: 5/s")
                return nil
            }
            rateNode = rate
            if let resume = map["resume"], let text = string(resume, "churn resume") {
                let number = text.hasSuffix("%") ? Double(text.dropLast().trimmingCharacters(in: .whitespaces)) : nil
                if let number, (0...100).contains(number) {
                    resumeShare = number / 100
                } else {
                    problem(resume, "churn resume must be a percentage from 0% to 100%, got '\(text)'", hint: "write resume: 70%")
                }
            }
        }
        guard let text = string(rateNode, "churn rate") else { return nil }
        guard var rate = ChurnRate(parsing: text) else {
            problem(
                rateNode, "churn rate must be a positive rate such as 5/s, 300/m or 18000/h (at most 100000/s), got '\(text)'")
            return nil
        }
        if let resumeShare { rate.resumeShare = resumeShare }
        return rate
    }

    /// `variables:`: names of letters, digits and '_' (not the engine's), plain-text values.
    mutating func decodeVariables(_ node: Node) -> [String: String] {
        var variables: [String: String] = [:]
        guard let map = mapping(node, "variables") else { return variables }
        for (key, value) in map {
            guard let keyText = key.string, keyText.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                problem(key, "variable names are letters, digits and '_'")
                continue
            }
            if Self.engineVariables.contains(keyText) {
                problem(key, "'\(keyText)' is set by xmppload for every session and cannot be redefined")
            }
            if let text = string(value, "variable '\(keyText)'") {
                if text.contains("${") {
                    problem(
                        value, "variable '\(keyText)' is plain text: '${…}' is not expanded inside a variable",
                        hint: "write the template where the variable is used instead")
                }
                variables[keyText] = text
            }
        }
        return variables
    }

    mutating func decodeProfile(_ root: Node.Mapping, variables: [String: String]) -> Profile? {
        let name = root["name"].flatMap { string($0, "name") } ?? URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let description = root["description"].flatMap { string($0, "description") } ?? ""
        var transport = ProfileTransport.any
        if let node = root["transport"], let text = oneOf(node, "transport", ProfileTransport.allCases.map(\.rawValue)) {
            transport = ProfileTransport(rawValue: text)!
        }
        var login = LoginOptions()
        if let node = root["login"] { login = decodeLoginOptions(node).options }
        var repeatMode = RepeatMode.once
        if let node = root["repeat"], let text = oneOf(node, "repeat", ["once", "forever"]) { repeatMode = RepeatMode(rawValue: text)! }
        let stepTimeout = root["step_timeout"].flatMap { duration($0, "step_timeout") } ?? .seconds(30)
        let reconnect = root["reconnect"].flatMap { decodeReconnect($0) } ?? .off
        let keepAlive = root["keepalive"].flatMap { decodeKeepAlive($0) }
        let streamManagement = root["stream_management"].flatMap { decodeStreamManagement($0) }
        loginDefaults = login
        defaultStepTimeout = stepTimeout

        guard let stepsNode = root["steps"] else {
            problem(nil, "the profile has no 'steps'", hint: "add `steps: [login, logout]` at least")
            return nil
        }
        var flow = SessionFlow.loggedOut
        var steps = decodeSteps(stepsNode, flow: &flow)
        if stepsNode.sequence?.isEmpty == true {
            problem(stepsNode, "'steps' is empty", hint: "add at least `- login`")
        } else if !steps.isEmpty, !Self.containsLogin(steps) {
            problem(stepsNode, "the profile never logs in", hint: "add `- login` as the first step")
        }
        // A profile whose steps leave the session logged in (or online until the load stops) gets an
        // implicit logout, so every path through a valid profile ends with one.
        if flow == .loggedIn || flow == .ended(by: "stay_online") || flow == .ended(by: "repeat") {
            steps.append(Step(name: "logout", action: .logout, location: location(stepsNode)))
        }
        checkVariables(known: Set(Self.engineVariables).union(variables.keys))
        var profile = Profile(
            name: name, description: description, login: login, steps: steps, repeatMode: repeatMode,
            variables: variables, stepTimeout: stepTimeout, source: file)
        profile.reconnect = reconnect
        profile.keepAlive = keepAlive
        profile.streamManagement = streamManagement
        profile.transport = transport
        profile.transportLocation = root["transport"].map { location($0) }
        return profile
    }

    mutating func checkVariables(known: Set<String>) {
        for (template, location) in templates {
            for name in template.variables where !known.contains(name) {
                problems.append(
                    ProfileProblem(
                        location: location, message: "undefined variable '${\(name)}'",
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
        checkKeys(map, allowed: ["sasl", "tls", "resource", "register", "mode", "fast"], "login")
        if let value = map["sasl"], let text = string(value, "login.sasl") {
            if let mechanism = SASLMechanism(name: text) {
                options.mechanism = mechanism
            } else {
                problem(value, "unknown SASL mechanism '\(text)'", hint: "use one of \(SASLMechanism.allCases.map(\.name).joined(separator: ", "))")
            }
        }
        if let value = map["tls"], let text = oneOf(value, "login.tls", TLSMode.allCases.map(\.rawValue)) { options.tls = TLSMode(rawValue: text) }
        if let value = map["resource"], let resource = template(value, "login.resource") {
            options.resource = resource
            resourceSet = true
        }
        if let value = map["register"], let flag = bool(value, "login.register") { options.register = flag }
        if let value = map["mode"], let text = oneOf(value, "login.mode", LoginMode.allCases.map(\.rawValue)) {
            options.mode = LoginMode(rawValue: text)
        }
        if let value = map["fast"], let flag = bool(value, "login.fast") { options.fast = flag }
        return (options, resourceSet)
    }

    // MARK: - Helpers

    static func containsLogin(_ steps: [Step]) -> Bool {
        steps.contains { step in
            switch step.action {
            case .login: return true
            case .loop(_, let body): return containsLogin(body)
            case .choose(let branches): return branches.contains { containsLogin($0.steps) }
            default: return false
            }
        }
    }

    static func closest(to word: String, in candidates: [String]) -> String? { Spelling.closest(to: word, in: candidates) }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension Node {
    /// The scalar's text, or nil for mappings and sequences.
    var string: String? {
        if case .scalar(let scalar) = self { return scalar.string }
        return nil
    }
}
