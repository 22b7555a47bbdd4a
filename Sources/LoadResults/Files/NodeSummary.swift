/// `summary.json`'s `nodes`: per-node figures of a run with more than one endpoint (absent for a
/// single server), read from the run's accumulated `NodeFigures`.
///
/// Per node (keyed by `host:port`): logins that succeeded there, login latency from the intended
/// start (`login_ms`) and from the TCP connect (`service_login_ms`), each login phase
/// (`phases_ms`), and the errors of the sessions connected to it. `message_matrix_ms[sender][receiver]`
/// is one-to-one message latency from send to receipt between a sender on one node and a receiver
/// on another (or the same) node. Milliseconds from HDR histograms, never averaged.
public struct NodeSummary: Codable, Sendable, Equatable {
    public struct Node: Codable, Sendable, Equatable {
        public var loggedIn: UInt64
        public var login: RunSummary.Percentiles?
        public var serviceLogin: RunSummary.Percentiles?
        public var phases: [String: RunSummary.Percentiles]
        public var errors: [String: UInt64]

        enum CodingKeys: String, CodingKey {
            case loggedIn = "logged_in"
            case login = "login_ms"
            case serviceLogin = "service_login_ms"
            case phases = "phases_ms"
            case errors
        }

        public var errorCount: UInt64 { errors.values.reduce(0, +) }
    }

    public var nodes: [String: Node]
    public var messageMatrix: [String: [String: RunSummary.Percentiles]]

    enum CodingKeys: String, CodingKey {
        case nodes
        case messageMatrix = "message_matrix_ms"
    }

    public init(_ figures: NodeFigures) {
        nodes = figures.nodes.mapValues { node in
            Node(
                loggedIn: node.latency["login"]?.count ?? 0,
                login: node.latency["login"].map(RunSummary.Percentiles.init),
                serviceLogin: node.serviceLatency["login"].map(RunSummary.Percentiles.init),
                phases: node.latency.filter { $0.key.hasPrefix("login.") }.mapValues(RunSummary.Percentiles.init),
                errors: node.errors)
        }
        messageMatrix = figures.messages.mapValues { $0.mapValues(RunSummary.Percentiles.init) }
    }

    /// Every node named anywhere (as a login node, sender or receiver), sorted.
    public var labels: [String] {
        Array(Set(nodes.keys).union(messageMatrix.keys).union(messageMatrix.values.flatMap(\.keys))).sorted()
    }

    /// Messages counted in the matrix in total, and those whose sender and receiver were on
    /// different nodes.
    public var messageCounts: (total: UInt64, crossNode: UInt64) {
        var total: UInt64 = 0
        var cross: UInt64 = 0
        for (sender, row) in messageMatrix {
            for (receiver, cell) in row {
                total += cell.count
                if sender != receiver { cross += cell.count }
            }
        }
        return (total, cross)
    }
}
