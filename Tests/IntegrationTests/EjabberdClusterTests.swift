import Foundation
import LoadResults
import Testing

/// A two-node ejabberd cluster on loopback (scripts/ejabberd-cluster): the nodes form a cluster, and
/// messages from users logged in on node 1 reach a user logged in on node 2 — two xmppload processes,
/// one per node, sharing a run id; then one process with both endpoints fills the node × node
/// message matrix with 0 lost. Skipped (with a note) when ejabberd is not installed.
@Suite(.serialized) struct EjabberdClusterTests {
    static var ejabberdInstalled: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/ejabberd-23.01")
            || FileManager.default.fileExists(atPath: "/usr/sbin/ejabberdctl")
    }

    static func cluster(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try ChildProcess.spawn(LocalServer.repositoryRoot.appendingPathComponent("scripts/ejabberd-cluster").path, arguments)
        defer { child.removeLog() }
        let status = child.wait(timeout: 180)
        return (status, child.output)
    }

    @Test(.enabled(if: ejabberdInstalled, "ejabberd is not installed: scripts/install-deps --ejabberd"), .timeLimit(.minutes(5)))
    func messagesCrossFromNodeOneToNodeTwo() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-ejabberd-\(UUID().uuidString.prefix(8))").path
        let up = try Self.cluster(["up", "--dir", "\(base)/cluster", "--accounts", "50"])
        defer {
            _ = try? Self.cluster(["down", "--dir", "\(base)/cluster"])
            try? FileManager.default.removeItem(atPath: base)
        }
        try #require(up.status == 0, "\(up.output)")
        let values = LocalServer.keyValues(up.output)
        let servers = try #require(values["XMPPLOAD_SERVERS"]).split(separator: ",").map(String.init)
        try #require(servers.count == 2 && servers[0].hasPrefix("127.0.0.2:") && servers[1].hasPrefix("127.0.0.3:"), "\(servers)")

        // Both nodes see each other as running cluster members.
        let status = try Self.cluster(["status", "--dir", "\(base)/cluster"])
        #expect(status.status == 0)
        #expect(status.output.contains("ejabberd1@127.0.0.2") && status.output.contains("ejabberd2@127.0.0.3"), "\(status.output)")

        // Receivers: 25 users on node 2 (accounts 26-50). Senders: 25 users on node 1 (1-25), two
        // messages each to user26, starting after the receivers logged in. One run id for both.
        let runID = "cross-\(UUID().uuidString.prefix(6))"
        let common = ["--domain", "load.test", "--password", "secret", "--insecure", "--plain", "--run-id", runID]
        let receiver = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                LocalServer.repositoryRoot.appendingPathComponent("profiles/idle.yaml").path, "--server", servers[1],
                "--accounts", "26-50", "--sessions", "25", "--duration", "20s", "--out", "\(base)/node2",
            ].run(common))
        defer { receiver.removeLog() }
        let sender = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                LocalServer.repositoryRoot.appendingPathComponent("profiles/cluster-cross.yaml").path, "--server", servers[0],
                "--accounts", "1-25", "--sessions", "25", "--var", "peer=26", "--start-at", "+6s", "--duration", "10s",
                "--out", "\(base)/node1",
            ].run(common))
        defer { sender.removeLog() }
        let senderStatus = sender.wait(timeout: 90)
        let receiverStatus = receiver.wait(timeout: 90)
        #expect(senderStatus == 0, "\(sender.output)")
        #expect(receiverStatus == 0, "\(receiver.output)")

        let sent = try ResultsDirectory(path: "\(base)/node1").readSummary()
        let received = try ResultsDirectory(path: "\(base)/node2").readSummary()
        #expect(sent.runID == runID && received.runID == runID)
        #expect(sent.sessions.loggedIn == 25 && received.sessions.loggedIn == 25)
        #expect(sent.messages.sent == 50)
        #expect(received.messages.received == 50, "received \(received.messages)")
        #expect(received.messages.duplicated == 0)
        // One run of two generators sharing --run-id without --segment: alone the sender cannot
        // judge loss (its verdict leaves it to report); merged, every message was delivered.
        #expect(sent.verdict?.work?.messagesLost == nil, "\(String(describing: sent.verdict))")
        let merged = try CommandLineTests.xmppload(["report", "\(base)/node1", "\(base)/node2", "--html", "\(base)/merged.html"])
        #expect(merged.status == 0, "\(merged.output)")
        #expect(
            merged.output.contains("generators 2 sharing run id \(runID): chat sent 50  delivered 50 (50 across generators)  lost 0"),
            "\(merged.output)")
        #expect(!merged.output.contains("not reconciled"), "\(merged.output)")
        // One generator per node: each labelled its node, so the merged matrix has the node 1 → node 2 cell.
        let mergedSummary = try SegmentedRunTests.report(["\(base)/node1", "\(base)/node2"], base: base)
        let matrix = try #require(mergedSummary.nodes?.messageMatrix, "no node matrix in the merged report")
        #expect(matrix[servers[0]]?[servers[1]]?.count == 50, "\(matrix)")

        try Self.oneGeneratorOnBothNodesFillsTheMatrix(servers: servers, base: base)
    }

    /// One generator with both endpoints (`--server` twice): sessions alternate between the nodes,
    /// each sends 3 messages to random online users, so messages go within and across nodes. Per-node
    /// logins and all four matrix cells have counts, and nothing is lost.
    static func oneGeneratorOnBothNodesFillsTheMatrix(servers: [String], base: String) throws {
        let profile = "\(base)/node-matrix.yaml"
        try """
        name: node-matrix
        login: {resource: matrix}
        steps:
          - login
          - presence: available
          - think: 3s
          - message: {to: random, body_size: 32, count: 3, interval: 300ms}
          - stay_online
          - logout
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                profile, "--server", servers[0], "--server", servers[1], "--accounts", "1-20", "--sessions", "20",
                "--ramp", "1s", "--duration", "10s", "--out", "\(base)/matrix",
            ].run(["--domain", "load.test", "--password", "secret", "--insecure", "--plain"]))
        defer { run.removeLog() }
        let status = run.wait(timeout: 90)
        #expect(status == 0, "\(run.output)")
        let summary = try ResultsDirectory(path: "\(base)/matrix").readSummary()
        #expect(summary.sessions.loggedIn == 20)
        // Every message to a random online user arrives (a session that found nobody online yet sends none).
        #expect(summary.messages.sent >= 40 && summary.messages.received == summary.messages.sent, "\(summary.messages)")
        #expect(summary.messages.lost == 0 && summary.messages.duplicated == 0)
        let nodes = try #require(summary.nodes, "a run with two endpoints has per-node figures")
        #expect(nodes.labels == servers.sorted())
        for server in servers {
            #expect(nodes.nodes[server]?.loggedIn == 10, "sessions alternate between the nodes: \(server)")
            #expect(nodes.nodes[server]?.phases["login.sasl"]?.count == 10)
            for receiver in servers {
                #expect((nodes.messageMatrix[server]?[receiver]?.count ?? 0) > 0, "matrix cell \(server) → \(receiver)")
            }
        }
        #expect(nodes.messageCounts.total == summary.messages.received)
        #expect(nodes.messageCounts.crossNode > 0 && nodes.messageCounts.crossNode < nodes.messageCounts.total)
        #expect(run.output.contains("message latency by node"), "the text report shows the matrix")
    }
}

extension Array where Element == String {
    /// `xmppload run` with these arguments after the profile, then `common`.
    func run(_ common: [String]) -> [String] { ["run"] + self + common }
}
