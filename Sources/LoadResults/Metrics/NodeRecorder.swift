/// The per-node part of one event loop's `MetricsRecorder` (runs with more than one endpoint): per
/// node, the latencies of logins to it and its sessions' errors; per (sender node, receiver node),
/// the one-to-one message latency. Arrays indexed by node (and metric) index, histograms created on
/// first use and reset, not reallocated, at each snapshot.
///
/// Bounded: `labels.count` nodes, `labels.count²` matrix cells; a stamp naming a node that is not
/// one of `labels` (another generator's endpoint list) is not counted in the matrix.
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
        return figures.isEmpty ? nil : figures
    }
}
