/// `--var KEY=VALUE` overrides of a profile's `variables:` (as k6's `-e`), applied before a run,
/// `check` or `plan`. Only variables a profile defines can be overridden: an unknown key is an error
/// naming the variables there are. In a mix, a key overrides it in every profile that defines it.
///
/// Invariants: keys are letters, digits and '_'; each key at most once; values are plain text (no
/// `${…}`, as in the profile itself).
public struct VariableOverrides: Sendable, Equatable {
    /// In the order given.
    public let values: [(key: String, value: String)]

    public static func == (lhs: VariableOverrides, rhs: VariableOverrides) -> Bool {
        lhs.values.elementsEqual(rhs.values) { $0.key == $1.key && $0.value == $1.value }
    }

    public static let none = VariableOverrides(checked: [])

    private init(checked values: [(key: String, value: String)]) { self.values = values }

    /// Parses `KEY=VALUE` arguments; every problem at once.
    public init(parsing arguments: [String]) throws(VariableOverrideErrors) {
        var problems: [String] = []
        var values: [(key: String, value: String)] = []
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "=") else {
                problems.append("--var must be KEY=VALUE, got '\(argument)'")
                continue
            }
            let key = String(argument[..<equals])
            let value = String(argument[argument.index(after: equals)...])
            if key.isEmpty || !key.allSatisfy({ ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }) {
                problems.append("--var \(argument): variable names are letters, digits and '_'")
            } else if values.contains(where: { $0.key == key }) {
                problems.append("--var \(key) is given twice")
            } else if value.contains("${") {
                problems.append("--var \(key): a value is plain text, '${…}' is not expanded")
            } else {
                values.append((key, value))
            }
        }
        guard problems.isEmpty else { throw VariableOverrideErrors(messages: problems) }
        self.values = values
    }
}

extension RunDefinition {
    /// This definition with the overrides applied to every profile that defines each key, and to the
    /// file's own `variables:` (those `servers:` uses); throws naming the defined variables when a
    /// key is defined by neither.
    public func overriding(_ overrides: VariableOverrides) throws(VariableOverrideErrors) -> RunDefinition {
        var copy = self
        var problems: [String] = []
        for (key, value) in overrides.values {
            var found = false
            if copy.variables[key] != nil {
                copy.variables[key] = value
                found = true
            }
            for index in copy.profiles.indices where copy.profiles[index].profile.variables[key] != nil {
                copy.profiles[index].profile.variables[key] = value
                found = true
            }
            if !found {
                let defined = Set(profiles.flatMap { $0.profile.variables.keys }).union(variables.keys).sorted()
                problems.append(
                    "--var \(key): the profile defines no variable '\(key)'; "
                        + (defined.isEmpty ? "it has no `variables:`" : "its variables are \(defined.joined(separator: ", "))"))
            }
        }
        guard problems.isEmpty else { throw VariableOverrideErrors(messages: problems) }
        return copy
    }
}

/// Every problem of the `--var` arguments, one message each.
public struct VariableOverrideErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var messages: [String]
    public init(messages: [String]) { self.messages = messages }
    public var description: String { messages.joined(separator: "\n") }
}
