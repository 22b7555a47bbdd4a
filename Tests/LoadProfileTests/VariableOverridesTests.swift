import Testing

@testable import LoadProfile

/// `--var KEY=VALUE` over a profile's `variables:` (as `run`, `check` and `plan` apply it).
@Suite struct VariableOverridesTests {
    static let yaml = """
        name: cross
        variables:
          peer_first: "1"
          peer_last: "25"
        steps:
          - login
          - message: {to: "user${peer_first}@${domain}", body_size: 10}
        """

    @Test func overridesReplaceDefinedVariables() throws {
        let definition = try ProfileLoader.load(yaml: Self.yaml, file: "cross.yaml")
        let overridden = try definition.overriding(VariableOverrides(parsing: ["peer_first=26", "peer_last=50="]))
        #expect(overridden.profiles[0].profile.variables == ["peer_first": "26", "peer_last": "50="])
        #expect(definition.profiles[0].profile.variables["peer_first"] == "1")
        #expect(try definition.overriding(.none) == definition)
    }

    @Test func anUnknownKeyNamesTheProfilesVariables() throws {
        let definition = try ProfileLoader.load(yaml: Self.yaml, file: "cross.yaml")
        do {
            _ = try definition.overriding(VariableOverrides(parsing: ["peer=1", "other=2"]))
            Issue.record("unknown keys accepted")
        } catch {
            #expect(
                error.messages == [
                    "--var peer: the profile defines no variable 'peer'; its variables are peer_first, peer_last",
                    "--var other: the profile defines no variable 'other'; its variables are peer_first, peer_last",
                ])
        }
    }

    @Test(arguments: [
        (["novalue"], "--var must be KEY=VALUE, got 'novalue'"),
        (["=1"], "variable names are letters, digits and '_'"),
        (["a-b=1"], "variable names are letters, digits and '_'"),
        (["a=1", "a=2"], "--var a is given twice"),
        (["a=${domain}"], "'${…}' is not expanded"),
    ])
    func malformedArgumentsAreRejected(arguments: [String], message: String) {
        do {
            _ = try VariableOverrides(parsing: arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(error.messages.count == 1 && error.messages[0].contains(message), "\(error.messages)")
        }
    }
}
