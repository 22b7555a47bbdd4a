import Foundation
import Testing

@testable import LoadResults

/// Per-node figures: the recorder attributes logins, phases, errors and messages to nodes; snapshots
/// merge them by node label; the summary, text and HTML reports show them for runs with more than
/// one endpoint and for generators of a run of several (one node each); hints name the remedy once
/// per kind.
@Suite struct NodeFiguresTests {
    static let nodeA = ServerNode(index: 0, label: "127.0.0.2:5222")
    static let nodeB = ServerNode(index: 1, label: "127.0.0.3:5222")

    static func registry(nodes: [String]) -> (MetricRegistry, login: MetricID, sasl: MetricID, message: MetricID) {
        var registry = MetricRegistry()
        let login = registry.register("login")
        let sasl = registry.register("login.sasl")
        let message = registry.register("message")
        registry.nodeLabels = nodes
        return (registry, login, sasl, message)
    }

    /// A recorder of a two-node run fed known values: 2 logins on A, 1 on B, errors on each, and
    /// messages A→A, A→B (twice), B→A, plus one stamped by another generator's node (127.9.9.9).
    static func recordedTwoNodeSnapshot() -> IntervalSnapshot {
        let (registry, login, sasl, _) = registry(nodes: [nodeA.label, nodeB.label])
        var recorder = MetricsRecorder(registry: registry)
        let ms: UInt64 = 1_000_000
        recorder.recordLatency(login, correctedNanoseconds: 10 * ms, serviceNanoseconds: 8 * ms, node: nodeA)
        recorder.recordLatency(login, correctedNanoseconds: 20 * ms, serviceNanoseconds: 15 * ms, node: nodeA)
        recorder.recordLatency(login, correctedNanoseconds: 40 * ms, serviceNanoseconds: 30 * ms, node: nodeB)
        recorder.recordLatency(sasl, correctedNanoseconds: 3 * ms, serviceNanoseconds: 3 * ms, node: nodeB, keepServiceForNode: false)
        recorder.recordError(kind: "connect-refused", node: nodeA)
        recorder.recordError(kind: "timeout-login", node: nodeB)
        recorder.recordError(kind: "timeout-login", node: nodeB)
        recorder.recordNodeMessage(senderLabel: nodeA.label, receiver: nodeA, nanoseconds: 1 * ms)
        recorder.recordNodeMessage(senderLabel: nodeA.label, receiver: nodeB, nanoseconds: 5 * ms)
        recorder.recordNodeMessage(senderLabel: nodeA.label, receiver: nodeB, nanoseconds: 7 * ms)
        recorder.recordNodeMessage(senderLabel: nodeB.label, receiver: nodeA, nanoseconds: 6 * ms)
        recorder.recordNodeMessage(senderLabel: "127.9.9.9:5222", receiver: nodeA, nanoseconds: 9 * ms)
        return recorder.takeSnapshot(start: 0, end: 5)
    }

    @Test func recorderAttributesLoginsErrorsAndMessagesToNodes() throws {
        let snapshot = Self.recordedTwoNodeSnapshot()
        // The run-wide figures count everything, as before.
        #expect(snapshot.latency["login"]?.count == 3)
        #expect(snapshot.errors == ["connect-refused": 1, "timeout-login": 2])
        let nodes = try #require(snapshot.nodes)
        let a = try #require(nodes.nodes[Self.nodeA.label])
        let b = try #require(nodes.nodes[Self.nodeB.label])
        #expect(a.latency["login"]?.count == 2 && a.serviceLatency["login"]?.count == 2)
        #expect(a.latency["login"]?.maxMicroseconds ?? 0 >= 19_990)
        #expect(b.latency["login"]?.count == 1 && b.latency["login.sasl"]?.count == 1)
        #expect(b.serviceLatency["login.sasl"] == nil, "a phase keeps no separate service histogram per node")
        #expect(a.errors == ["connect-refused": 1] && b.errors == ["timeout-login": 2])
        #expect(nodes.messages[Self.nodeA.label]?[Self.nodeA.label]?.count == 1)
        #expect(nodes.messages[Self.nodeA.label]?[Self.nodeB.label]?.count == 2)
        #expect(nodes.messages[Self.nodeB.label]?[Self.nodeA.label]?.count == 1)
        #expect(nodes.messages[Self.nodeB.label]?[Self.nodeB.label] == nil)
        // A node this generator does not have is another generator's: its row is kept by label.
        #expect(nodes.messages["127.9.9.9:5222"]?[Self.nodeA.label]?.count == 1)
    }

    @Test func nextIntervalStartsEmpty() {
        let (registry, login, _, _) = Self.registry(nodes: [Self.nodeA.label, Self.nodeB.label])
        var recorder = MetricsRecorder(registry: registry)
        recorder.recordLatency(login, correctedNanoseconds: 1_000_000, serviceNanoseconds: 1_000_000, node: Self.nodeB)
        #expect(recorder.takeSnapshot(start: 0, end: 1).nodes?.nodes[Self.nodeB.label]?.latency["login"]?.count == 1)
        #expect(recorder.takeSnapshot(start: 1, end: 2).nodes == nil)
    }

    @Test func singleServerRunsRecordNoNodeFigures() {
        let (registry, login, _, _) = Self.registry(nodes: [])
        var recorder = MetricsRecorder(registry: registry)
        recorder.recordLatency(login, correctedNanoseconds: 1_000_000, serviceNanoseconds: 1_000_000, node: nil)
        recorder.recordLatency(login, correctedNanoseconds: 1_000_000, serviceNanoseconds: 1_000_000, node: Self.nodeA)
        recorder.recordError(kind: "connect-refused", node: Self.nodeA)
        recorder.recordNodeMessage(senderLabel: Self.nodeA.label, receiver: Self.nodeA, nanoseconds: 1)
        let snapshot = recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["login"]?.count == 2)
        #expect(snapshot.nodes == nil)
        let summary = Self.summary(snapshot)
        #expect(summary.nodes == nil)
        #expect(!TextReport.render(summary).contains("server nodes"))
    }

    /// One generator per node (the README's cluster layout, the Kubernetes Job with one SERVER):
    /// each generator labels its one node, counts what other generators' nodes sent to it, and the
    /// merged figures hold the whole node × node matrix.
    @Test func oneGeneratorPerNodeFillsTheMatrixWhenMerged() throws {
        let ms: UInt64 = 1_000_000
        let (registryA, loginA, _, _) = Self.registry(nodes: [Self.nodeA.label])
        var generatorA = MetricsRecorder(registry: registryA)
        let onlyA = ServerNode(index: 0, label: Self.nodeA.label)
        generatorA.recordLatency(loginA, correctedNanoseconds: 10 * ms, serviceNanoseconds: 9 * ms, node: onlyA)
        generatorA.recordNodeMessage(senderLabel: Self.nodeA.label, receiver: onlyA, nanoseconds: 2 * ms)
        generatorA.recordNodeMessage(senderLabel: Self.nodeB.label, receiver: onlyA, nanoseconds: 6 * ms)
        let (registryB, loginB, _, _) = Self.registry(nodes: [Self.nodeB.label])
        var generatorB = MetricsRecorder(registry: registryB)
        let onlyB = ServerNode(index: 0, label: Self.nodeB.label)
        generatorB.recordLatency(loginB, correctedNanoseconds: 20 * ms, serviceNanoseconds: 19 * ms, node: onlyB)
        for _ in 0..<3 { generatorB.recordNodeMessage(senderLabel: Self.nodeA.label, receiver: onlyB, nanoseconds: 7 * ms) }
        let merged = generatorA.takeSnapshot(start: 0, end: 5).merging(generatorB.takeSnapshot(start: 0, end: 5))
        let summary = try #require(Self.summary(merged).nodes)
        #expect(summary.labels == [Self.nodeA.label, Self.nodeB.label])
        #expect(summary.messageMatrix[Self.nodeA.label]?[Self.nodeA.label]?.count == 1)
        #expect(summary.messageMatrix[Self.nodeA.label]?[Self.nodeB.label]?.count == 3)
        #expect(summary.messageMatrix[Self.nodeB.label]?[Self.nodeA.label]?.count == 1)
        #expect(summary.messageCounts == (total: 5, crossNode: 4))
        #expect(summary.nodes[Self.nodeA.label]?.loggedIn == 1 && summary.nodes[Self.nodeB.label]?.loggedIn == 1)
    }

    @Test func otherGeneratorsNodesAreBounded() {
        let (registry, _, _, _) = Self.registry(nodes: [Self.nodeA.label])
        var recorder = MetricsRecorder(registry: registry)
        let only = ServerNode(index: 0, label: Self.nodeA.label)
        for index in 0..<(NodeRecorder.maxForeignSenders + 10) {
            recorder.recordNodeMessage(senderLabel: "127.9.\(index / 256).\(index % 256):5222", receiver: only, nanoseconds: 1)
        }
        #expect(recorder.takeSnapshot(start: 0, end: 1).nodes?.messages.count == NodeRecorder.maxForeignSenders)
    }

    @Test func snapshotsMergeByLabelWhateverTheEndpointOrder() throws {
        // Generator 2 lists the nodes the other way round: its index 0 is B.
        let (registry, login, _, _) = Self.registry(nodes: [Self.nodeB.label, Self.nodeA.label])
        var recorder = MetricsRecorder(registry: registry)
        let b = ServerNode(index: 0, label: Self.nodeB.label)
        let a = ServerNode(index: 1, label: Self.nodeA.label)
        recorder.recordLatency(login, correctedNanoseconds: 2_000_000, serviceNanoseconds: 1_000_000, node: b)
        recorder.recordNodeMessage(senderLabel: Self.nodeA.label, receiver: b, nanoseconds: 4_000_000)
        recorder.recordNodeMessage(senderLabel: Self.nodeB.label, receiver: a, nanoseconds: 4_000_000)
        let other = recorder.takeSnapshot(start: 0, end: 5)
        let merged = Self.recordedTwoNodeSnapshot().merging(other)
        let nodes = try #require(merged.nodes)
        #expect(nodes.nodes[Self.nodeB.label]?.latency["login"]?.count == 2)
        #expect(nodes.nodes[Self.nodeA.label]?.latency["login"]?.count == 2)
        #expect(nodes.messages[Self.nodeA.label]?[Self.nodeB.label]?.count == 3)
        #expect(nodes.messages[Self.nodeB.label]?[Self.nodeA.label]?.count == 2)
        #expect(merged == other.merging(Self.recordedTwoNodeSnapshot()))
    }

    @Test func nodeFiguresSurviveTheFileEncodingAndOldFilesStillDecode() throws {
        let snapshot = Self.recordedTwoNodeSnapshot()
        let line = try ResultsDirectory.line(for: snapshot)
        let decoded = try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line)
        #expect(decoded.nodes == snapshot.nodes)
        var old = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        old["nodes"] = nil
        let oldLine = try JSONSerialization.data(withJSONObject: old)
        #expect(try ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: oldLine).nodes == nil)
    }

    static func summary(_ total: IntervalSnapshot, errors: [String: UInt64] = [:]) -> RunSummary {
        var total = total
        total.errors.merge(errors, uniquingKeysWith: +)
        return RunSummary(
            runID: "r", profile: "chat", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 5),
            stopReason: "completed", total: total, healths: [], peakConcurrent: 3, ledger: LedgerCounts(),
            descriptorLimits: .init(soft: 20_000, hard: 20_000))
    }

    @Test func summaryAndReportsShowNodesAndTheMatrix() throws {
        let summary = Self.summary(Self.recordedTwoNodeSnapshot())
        let nodes = try #require(summary.nodes)
        // The third label is the other generator's node that sent to A.
        #expect(nodes.labels == [Self.nodeA.label, Self.nodeB.label, "127.9.9.9:5222"])
        #expect(nodes.nodes[Self.nodeA.label]?.loggedIn == 2 && nodes.nodes[Self.nodeB.label]?.loggedIn == 1)
        #expect(nodes.nodes[Self.nodeB.label]?.phases["login.sasl"]?.count == 1)
        #expect(nodes.nodes[Self.nodeB.label]?.errorCount == 2)
        #expect(nodes.messageCounts == (total: 5, crossNode: 4))
        #expect(nodes.messageMatrix[Self.nodeA.label]?[Self.nodeB.label]?.count == 2)

        // summary.json carries them under `nodes`, and reads back equal.
        let json = try JSONEncoder().encode(summary)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let encodedNodes = try #require(object["nodes"] as? [String: Any])
        #expect(encodedNodes["message_matrix_ms"] != nil && encodedNodes["nodes"] != nil)
        #expect(try JSONDecoder().decode(RunSummary.self, from: json).nodes == summary.nodes)

        let text = TextReport.render(summary)
        #expect(text.contains("server nodes"))
        #expect(text.contains("5 messages, 4 across nodes"))
        let matrixRow = try #require(text.split(separator: "\n").first { $0.hasPrefix(Self.nodeA.label) && $0.contains("(2)") })
        #expect(matrixRow.contains("(1)"), "A→A holds 1 message, A→B 2: \(matrixRow)")
        let html = HTMLReport.render(
            MergedResults(
                directories: ["d"], manifests: [], summaries: [summary],
                timeline: {
                    var timeline = MergedResults.Timeline()
                    timeline.add(Self.recordedTwoNodeSnapshot())
                    return timeline
                }()))
        #expect(html.contains("<h2>Server nodes</h2>") && html.contains("<h2>Message latency by node</h2>"))
        #expect(html.contains("(2)</td>"))
    }

    @Test(arguments: [
        (["addr-not-available": 7], ["addr-not-available (7)", "--source 127.0.0.2-127.0.0.9"]),
        (["fd-exhausted": 3], ["fd-exhausted (3)", "raised its limit to the hard limit, 20000", "ulimit -Hn"]),
        (["connect-refused": 3], []),
    ])
    func hintsNameTheRemedyOncePerKind(errors: [String: UInt64], expected: [String]) throws {
        let hints = ConnectionHint.hints(errors: errors, limits: .init(soft: 20_000, hard: 20_000))
        #expect(hints.count == (expected.isEmpty ? 0 : 1))
        for text in expected { #expect(hints.first?.contains(text) == true, "\(hints)") }
        let summary = Self.summary(IntervalSnapshot(start: 0, end: 5), errors: errors)
        #expect(summary.hints == (hints.isEmpty ? nil : hints))
        let report = TextReport.render(summary)
        for text in expected { #expect(report.components(separatedBy: text).count == 2, "said once: \(text)") }
    }

    @Test func descriptorHintSaysWhenTheSoftLimitIsBelowTheHardOne() {
        let hints = ConnectionHint.hints(errors: ["fd-exhausted": 1, "addr-not-available": 2], limits: .init(soft: 1024, hard: 20_000))
        #expect(hints.count == 2)
        #expect(hints[0].hasPrefix("addr-not-available") && hints[1].hasPrefix("fd-exhausted"))
        #expect(hints[1].contains("1024 descriptors, below the hard limit of 20000"))
    }
}
