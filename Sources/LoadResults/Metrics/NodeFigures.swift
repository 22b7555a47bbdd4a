/// One server node of a run with several endpoints: its position in the run's endpoint list and its
/// label (`host:port`, IPv6 in brackets), the name every result uses for it.
///
/// Invariant: `index` is a valid index into the run's `MetricRegistry.nodeLabels`, and `label` is
/// the label at that index.
public struct ServerNode: Sendable, Hashable {
    public let index: Int
    public let label: String

    public init(index: Int, label: String) {
        self.index = index
        self.label = label
    }

    /// The label of an endpoint: `host:port`, an IPv6 literal in brackets.
    public static func label(host: String, port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Per-node figures of one interval (or, accumulated, a whole run) of a run with more than one
/// endpoint: per node the latencies of the logins that went to it (whole login and each phase) and
/// the errors of its sessions, and the one-to-one message latency as a matrix sender node × receiver
/// node (from the stamp's send time to receipt, i.e. service time), so cross-node routing shows apart
/// from same-node delivery.
///
/// Keys are node labels (`ServerNode.label`), so results of several generators merge by label even
/// when their endpoint lists are ordered differently. Mergeable by adding (associative and
/// commutative); the number of keys is bounded by the run's endpoint count (a recorder counts only
/// its own labels; error kinds per node are capped like the run's, `CardinalityCap`).
public struct NodeFigures: Sendable, Equatable, Codable {
    /// What one node's sessions measured.
    public struct Node: Sendable, Equatable, Codable {
        /// Latency from the intended start per metric (`login`, `login.connect`, `login.sasl`, …).
        public var latency: [String: LatencyHistogram] = [:]
        /// Latency from the actual start (the TCP connect), for `login` only (a phase's service time
        /// equals its corrected one).
        public var serviceLatency: [String: LatencyHistogram] = [:]
        /// Typed error kind → count, for the sessions connected to this node.
        public var errors: [String: UInt64] = [:]

        public init() {}

        enum CodingKeys: String, CodingKey {
            case latency
            case serviceLatency = "service_latency"
            case errors
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            latency = try container.decodeIfPresent([String: LatencyHistogram].self, forKey: .latency) ?? [:]
            serviceLatency = try container.decodeIfPresent([String: LatencyHistogram].self, forKey: .serviceLatency) ?? [:]
            errors = try container.decodeIfPresent([String: UInt64].self, forKey: .errors) ?? [:]
        }

        public mutating func add(_ other: Node) {
            for (name, histogram) in other.latency { latency[name, default: LatencyHistogram()].add(histogram) }
            for (name, histogram) in other.serviceLatency { serviceLatency[name, default: LatencyHistogram()].add(histogram) }
            for (kind, count) in other.errors {
                CardinalityCap.add(kind, count, to: &errors, cap: CardinalityCap.errorKinds, combine: +)
            }
        }

        public var errorCount: UInt64 { errors.values.reduce(0, +) }
    }

    /// Node label → its figures.
    public var nodes: [String: Node] = [:]
    /// Sender node label → receiver node label → one-to-one message latency (send to receipt).
    public var messages: [String: [String: LatencyHistogram]] = [:]

    public init(nodes: [String: Node] = [:], messages: [String: [String: LatencyHistogram]] = [:]) {
        self.nodes = nodes
        self.messages = messages
    }

    public var isEmpty: Bool { nodes.isEmpty && messages.isEmpty }

    public mutating func add(_ other: NodeFigures) {
        for (label, node) in other.nodes { nodes[label, default: Node()].add(node) }
        for (sender, row) in other.messages {
            for (receiver, histogram) in row { messages[sender, default: [:]][receiver, default: LatencyHistogram()].add(histogram) }
        }
    }

    /// `a` and `b` added; nil when both are nil.
    public static func adding(_ a: NodeFigures?, _ b: NodeFigures?) -> NodeFigures? {
        guard var total = a else { return b }
        if let b { total.add(b) }
        return total
    }
}
