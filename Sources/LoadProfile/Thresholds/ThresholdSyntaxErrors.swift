/// Every problem found in one threshold's text, each with its 1-based column in that text.
///
/// The caller places the text: `file:line:column` in a profile (the decoder adds the scalar's
/// position), `--threshold '…': column N` on the command line.
public struct ThresholdSyntaxErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// One problem: where in the text, what, and how to fix it.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// 1-based column in the threshold's text.
        public var column: Int
        public var message: String
        public var hint: String?

        public init(column: Int, message: String, hint: String? = nil) {
            self.column = column
            self.message = message
            self.hint = hint
        }

        public var description: String { "column \(column): \(message)" + (hint.map { " (\($0))" } ?? "") }
    }

    public var problems: [Problem]

    public init(problems: [Problem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
