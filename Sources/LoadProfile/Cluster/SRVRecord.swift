/// One DNS SRV record (RFC 2782) as a plain value: `priority weight port target`. A target of "."
/// (stored as an empty string or ".") means the service is decidedly not available at the domain.
public struct SRVRecord: Sendable, Hashable {
    /// Lower is tried first.
    public var priority: UInt16
    /// Relative chance among records of the same priority; 0 records get a very small chance.
    public var weight: UInt16
    public var port: UInt16
    /// The host name, without the trailing dot.
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }

    /// "." — the service is not offered.
    public var isNoService: Bool { target.isEmpty || target == "." }
}
