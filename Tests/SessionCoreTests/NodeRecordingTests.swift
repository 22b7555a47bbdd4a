import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// A session of a run with several endpoints records its login, phases and errors for its node, and
/// stamps its messages with its node; a receiver records the sender-node × receiver-node cell.
@Suite struct NodeRecordingTests {
    static let nodes = ["127.0.0.2:5222", "127.0.0.3:5222"]
    static let nodeB = ServerNode(index: 1, label: "127.0.0.3:5222")

    static func profile(_ steps: String) -> String {
        "name: t\nlogin: {sasl: PLAIN, tls: none, resource: r1}\nsteps:\n\(steps)\n"
    }

    @Test func loginAndMessagesAreRecordedForTheSessionsNode() throws {
        var driver = try MachineDriver(
            profile: Self.profile("  - login\n  - message: {to: random, body: hi}\n  - stay_online"), nodes: Self.nodes,
            node: Self.nodeB)
        driver.host.online = [4]
        try driver.logIn()
        let message = try #require(driver.sent().first { $0.name == "message" })
        let stamp = try #require(MessageStamp(in: message))
        #expect(stamp.node == Self.nodeB.label)

        // A message from a sender on node A arrives 3 ms after it was sent.
        driver.advance(by: .milliseconds(10))
        let sentAt = (driver.now + .milliseconds(-3)).stampNanoseconds
        let incoming = MessageStamp(runID: "run-1", sender: 7, sequence: 1, sentNanos: sentAt, intendedNanos: sentAt, node: Self.nodes[0])
        try driver.receive(
            Stanza.message(to: "user1@load.test", type: "chat", body: "x", extra: [incoming.element])
                .serialized(parentNamespace: XMPPNamespace.client))

        let figures = try #require(driver.host.recorder.takeSnapshot(start: 0, end: 1).nodes)
        let node = try #require(figures.nodes[Self.nodeB.label])
        #expect(node.latency["login"]?.count == 1 && node.serviceLatency["login"]?.count == 1)
        #expect(node.latency["login.sasl"]?.count == 1)
        #expect(figures.nodes[Self.nodes[0]] == nil)
        let cell = try #require(figures.messages[Self.nodes[0]]?[Self.nodeB.label])
        #expect(cell.count == 1 && cell.maxMicroseconds >= 2_990 && cell.maxMicroseconds <= 3_010)
    }

    @Test func aFailedLoginCountsAsAnErrorOfItsNode() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - stay_online"), nodes: Self.nodes, node: Self.nodeB)
        driver.send(.start)
        driver.send(.connectFailed(.refused))
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == ["connect-refused": 1])
        #expect(snapshot.nodes?.nodes[Self.nodeB.label]?.errors == ["connect-refused": 1])
    }

    @Test func aSingleServerRunStampsNoNode() throws {
        var driver = try MachineDriver(profile: Self.profile("  - login\n  - message: {to: random, body: hi}\n  - logout"))
        driver.host.online = [4]
        try driver.logIn()
        let message = try #require(driver.sent().first { $0.name == "message" })
        let stamp = try #require(message.firstChild(named: "stamp", namespace: XMPPNamespace.stamp))
        #expect(stamp.attribute("n") == nil)
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).nodes == nil)
    }
}
