/// One problem found in a profile: where, what, and how to fix it.
public struct ProfileProblem: Sendable, Equatable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String
    public var hint: String?

    public init(location: SourceLocation, message: String, hint: String? = nil) {
        self.location = location
        self.message = message
        self.hint = hint
    }

    /// `file:line:column: error: message` and, on the next line, `  hint: …`.
    public var description: String {
        "\(location): error: \(message)" + (hint.map { "\n  hint: \($0)" } ?? "")
    }
}

/// Every problem of a profile (and of the profiles a mix refers to), in file order.
public struct ProfileErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [ProfileProblem]

    public init(problems: [ProfileProblem]) { self.problems = problems }

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
            + "\n\(problems.count) problem\(problems.count == 1 ? "" : "s") found"
    }
}
