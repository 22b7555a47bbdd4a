import Foundation
import Yams

/// Loads a profile file (or a mix of profile files) into a validated `RunDefinition`, or throws
/// `ProfileErrors` listing *every* problem at once with file:line:column and a hint.
public enum ProfileLoader {
    public static func load(path: String) throws(ProfileErrors) -> RunDefinition {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProfileErrors(problems: [
                ProfileProblem(
                    location: SourceLocation(file: path, line: 1, column: 1),
                    message: "cannot read the profile file",
                    hint: "check the path; profiles live in profiles/")
            ])
        }
        return try load(yaml: String(decoding: data, as: UTF8.self), file: path, bytes: Array(data))
    }

    public static func load(yaml: String, file: String) throws(ProfileErrors) -> RunDefinition {
        try load(yaml: yaml, file: file, bytes: Array(yaml.utf8))
    }

    static func load(yaml: String, file: String, bytes: [UInt8], depth: Int = 0) throws(ProfileErrors) -> RunDefinition {
        var decoder = ProfileDecoder(file: file)
        let node: Node
        do {
            guard let composed = try Yams.compose(yaml: yaml) else {
                throw ProfileErrors(problems: [
                    ProfileProblem(
                        location: SourceLocation(file: file, line: 1, column: 1),
                        message: "the profile is empty", hint: "start with `name:` and `steps:`")
                ])
            }
            node = composed
        } catch let error as ProfileErrors {
            throw error
        } catch {
            throw ProfileErrors(problems: [decoder.yamlProblem(error)])
        }
        let definition = decoder.decodeRunDefinition(node, bytes: bytes, depth: depth)
        if !decoder.problems.isEmpty || definition == nil {
            throw ProfileErrors(
                problems: decoder.problems.sorted {
                    ($0.location.file, $0.location.line, $0.location.column) < ($1.location.file, $1.location.line, $1.location.column)
                })
        }
        return definition!
    }
}
