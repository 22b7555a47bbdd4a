/// Something that happened to a monitored source between samples, for the run's timeline: a process
/// given by name restarted (new process ids), exited, or appeared.
///
/// `at` is seconds since the run's start, on the intervals' clock: the sample that saw the change
/// (the change happened within the interval before it).
public struct MonitorEvent: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Equatable, Codable {
        /// The processes of the name were replaced by others (a restart).
        case restarted
        /// The process (or every process of the name) is gone.
        case exited
        /// A process of the name appeared where there was none.
        case appeared
    }

    public var at: Double
    /// The source's label.
    public var source: String
    public var kind: Kind
    /// Process ids before and after.
    public var before: [Int32]
    public var after: [Int32]

    public init(at: Double, source: String, kind: Kind, before: [Int32], after: [Int32]) {
        self.at = at
        self.source = source
        self.kind = kind
        self.before = before
        self.after = after
    }

    /// `prosody restarted: pid 1234 → 5678`.
    public var text: String {
        func list(_ pids: [Int32]) -> String {
            pids.isEmpty ? "none" : (pids.count == 1 ? "pid " : "pids ") + pids.map(String.init).joined(separator: ",")
        }
        return "\(source) \(kind.rawValue): \(list(before)) → \(list(after))"
    }
}
