/// A dense index for a named latency metric (`login`, `login.sasl`, `roster.get`, `message`, …).
public struct MetricID: Hashable, Sendable {
    public let index: Int
}

/// Maps metric names to dense `MetricID`s, once, before the run starts; recorders then index arrays
/// instead of hashing strings on the hot path. Registering a name twice returns the same id.
public struct MetricRegistry: Sendable {
    public private(set) var names: [String] = []
    private var ids: [String: MetricID] = [:]
    /// The run's server nodes (`ServerNode.label`, in endpoint order) when it has more than one
    /// endpoint, or its one node when it is one generator of several; empty otherwise, and then no
    /// per-node figures are recorded.
    public var nodeLabels: [String] = []

    public init() {}

    @discardableResult
    public mutating func register(_ name: String) -> MetricID {
        if let id = ids[name] { return id }
        let id = MetricID(index: names.count)
        names.append(name)
        ids[name] = id
        return id
    }

    public func id(_ name: String) -> MetricID? { ids[name] }
    public var count: Int { names.count }
}
