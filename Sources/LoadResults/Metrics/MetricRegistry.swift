/// A dense index for a named latency metric (`login`, `login.sasl`, `roster.get`, `message`, …).
public struct MetricID: Hashable, Sendable {
    public let index: Int
}

/// Maps metric names to dense `MetricID`s, and the counters session features register to dense
/// `CounterID`s (after the fixed `Counter`s), once, before the run starts; recorders then index
/// arrays instead of hashing strings on the hot path. Registering a name twice returns the same id.
public struct MetricRegistry: Sendable {
    public private(set) var names: [String] = []
    private var ids: [String: MetricID] = [:]
    /// The registered counters' names and notices, in `CounterID` order (after `Counter.allCases`).
    public private(set) var registeredCounters: [(name: String, notice: CounterNotice?)] = []
    private var counterIDs: [String: CounterID] = [:]
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

    /// A feature's counter `name` (a key in results files, like a fixed counter's), with what its
    /// count tells a person when it is not zero. A name of a fixed `Counter` or one registered
    /// before returns the same id.
    @discardableResult
    public mutating func registerCounter(_ name: String, notice: CounterNotice? = nil) -> CounterID {
        if let fixed = Counter(name: name) { return CounterID(index: fixed.rawValue) }
        if let id = counterIDs[name] { return id }
        let id = CounterID(index: Counter.allCases.count + registeredCounters.count)
        registeredCounters.append((name, notice))
        counterIDs[name] = id
        return id
    }

    /// The id of counter `name` (fixed or registered), if known.
    public func counterID(_ name: String) -> CounterID? {
        Counter(name: name).map { CounterID(index: $0.rawValue) } ?? counterIDs[name]
    }
}
