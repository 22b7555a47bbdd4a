/// A `--monitor` value that cannot be used: what is wrong, where, and how to write it instead. A usage
/// error (the command line exits 2 and prints every problem at once).
public struct MonitorSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value as given.
    public var spec: String
    /// What is wrong, in one sentence.
    public var problem: String
    /// How to write it instead (may be empty).
    public var hint: String

    public init(spec: String, problem: String, hint: String = "") {
        self.spec = spec
        self.problem = problem
        self.hint = hint
    }

    public var description: String {
        "--monitor \(spec): \(problem)" + (hint.isEmpty ? "" : " (\(hint))")
    }
}
