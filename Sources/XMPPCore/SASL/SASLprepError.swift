/// Why a user name or password cannot be prepared with SASLprep (RFC 4013): every problem found,
/// at once, without the text itself (it may be a password).
///
/// `problems` are sentences such as "contains a control character (RFC 3454 C.2)"; each kind of
/// problem appears once, in the order first met.
public struct SASLprepError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence per kind of problem, each naming the RFC rule broken.
    public let problems: [String]

    init(problems: [String]) {
        self.problems = problems
    }

    public var description: String { problems.joined(separator: "; ") }
}
