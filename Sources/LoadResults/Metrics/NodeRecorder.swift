/// The per-node part of one event loop's `MetricsRecorder` (runs with more than one endpoint, and
/// every generator of a run of several): per node, the latencies of logins to it and its sessions'
/// errors; per (sender node, receiver node), the one-to-one message latency. Arrays indexed by node
/// (and metric) index, histograms created on first use and reset, not reallocated, at each snapshot.
///
/// A stamp naming a sender node that is not one of `labels` comes from another generator (one
/// generator per node: the cluster layout of the README and the Kubernetes Job); its row is kept by
/// label, so the merged report's matrix has the cross-generator cells.
/// Bounded: `labels.count` nodes, `labels.count²` matrix cells, and at most `maxForeignSenders`
/// other generators' nodes × `labels.count` cells (stamps of further nodes are not counted).
struct NodeRecorder {
    let labels: [String]
    private let metricNames: [String]
    private let indexOfLabel: [String: Int]
    /// [node][metric] corrected latency; service latency only where one was given.
    private var corrected: [[LatencyHistogram?]]
    private var service: [[LatencyHistogram?]]
    private var errors: [[String: UInt64]]
    /// [sender * labels.count + receiver].
    private var matrix: [LatencyHistogram?]
    /// Sender label of another generator's node → [receiver] latency.
    private var foreign: [String: [LatencyHistogram?]] = [:]
    /// Most other generators' nodes kept in the matrix.
    static let maxForeignSenders = 64
    private var touched = false

    init(labels: [String], metricNames: [String]) {
        self.labels = labels
        self.metricNames = metricNames
        var index: [String: Int] = [:]
        for (position, label) in labels.enumerated() where index[label] == nil { index[label] = position }
        indexOfLabel = index
        corrected = Array(repeating: Array(repeating: nil, count: metricNames.count), count: labels.count)
        service = corrected
        errors = Array(repeating: [:], count: labels.count)
        matrix = Array(repeating: nil, count: labels.count * labels.count)
    }

    /// The node index of `label`, or nil when it is not one of this run's nodes.
    func index(of label: String) -> Int? { indexOfLabel[label] }

    mutating func recordLatency(node: Int, metric: MetricID, correctedNanoseconds: UInt64, serviceNanoseconds: UInt64?) {
        guard labels.indices.contains(node), metricNames.indices.contains(metric.index) else { return }
        touched = true
        if corrected[node][metric.index] == nil { corrected[node][metric.index] = LatencyHistogram() }
        corrected[node][metric.index]!.record(nanoseconds: correctedNanoseconds)
        if let serviceNanoseconds {
            if service[node][metric.index] == nil { service[node][metric.index] = LatencyHistogram() }
            service[node][metric.index]!.record(nanoseconds: serviceNanoseconds)
        }
    }

    mutating func recordError(node: Int, kind: String) {
        guard labels.indices.contains(node) else { return }
        touched = true
        CardinalityCap.add(kind, 1, to: &errors[node], cap: CardinalityCap.errorKinds, combine: +)
    }

    /// A message from a node named by its label: one of ours, or another generator's.
    mutating func recordMessage(senderLabel: String, receiver: Int, nanoseconds: UInt64) {
        if let sender = indexOfLabel[senderLabel] { return recordMessage(sender: sender, receiver: receiver, nanoseconds: nanoseconds) }
        guard labels.indices.contains(receiver), foreign[senderLabel] != nil || foreign.count < Self.maxForeignSenders else { return }
        touched = true
        if foreign[senderLabel] == nil { foreign[senderLabel] = Array(repeating: nil, count: labels.count) }
        if foreign[senderLabel]![receiver] == nil { foreign[senderLabel]![receiver] = LatencyHistogram() }
        foreign[senderLabel]![receiver]!.record(nanoseconds: nanoseconds)
    }

    mutating func recordMessage(sender: Int, receiver: Int, nanoseconds: UInt64) {
        guard labels.indices.contains(sender), labels.indices.contains(receiver) else { return }
        touched = true
        let cell = sender * labels.count + receiver
        if matrix[cell] == nil { matrix[cell] = LatencyHistogram() }
        matrix[cell]!.record(nanoseconds: nanoseconds)
    }

    /// The interval's figures (nil when nothing was recorded); the recorder starts the next interval empty.
    mutating func takeFigures() -> NodeFigures? {
        guard touched else { return nil }
        touched = false
        var figures = NodeFigures()
        for (node, label) in labels.enumerated() {
            var entry = NodeFigures.Node()
            for metric in metricNames.indices {
                if let histogram = corrected[node][metric], !histogram.isEmpty {
                    entry.latency[metricNames[metric]] = histogram
                    corrected[node][metric]!.reset()
                }
                if let histogram = service[node][metric], !histogram.isEmpty {
                    entry.serviceLatency[metricNames[metric]] = histogram
                    service[node][metric]!.reset()
                }
            }
            entry.errors = errors[node]
            errors[node] = [:]
            if entry != NodeFigures.Node() { figures.nodes[label, default: NodeFigures.Node()].add(entry) }
            for (receiver, receiverLabel) in labels.enumerated() {
                let cell = node * labels.count + receiver
                if let histogram = matrix[cell], !histogram.isEmpty {
                    figures.messages[label, default: [:]][receiverLabel, default: LatencyHistogram()].add(histogram)
                    matrix[cell]!.reset()
                }
            }
        }
        for (sender, row) in foreign {
            for (receiver, histogram) in row.enumerated() {
                guard let histogram, !histogram.isEmpty else { continue }
                figures.messages[sender, default: [:]][labels[receiver], default: LatencyHistogram()].add(histogram)
                foreign[sender]![receiver]!.reset()
            }
        }
        return figures.isEmpty ? nil : figures
    }
}
