import LoadProfile
import LoadResults
import Testing
import XMPPCore

@testable import SessionCore

/// The blocking steps (XEP-0191) on virtual time: what each sends, what completes it, the list's
/// items counted, the server's pushes answered, and a server without the command said, not failed.
@Suite struct BlockingStepTests {
    static func driver(_ steps: String) throws -> MachineDriver {
        try MachineDriver(profile: SessionMachineTests.profile("  - login\n\(steps)  - stay_online"))
    }

    static func snapshot(_ driver: MachineDriver) -> IntervalSnapshot { driver.host.recorder.takeSnapshot(start: 0, end: 1) }

    @Test(arguments: [
        ("  - block: 'user${next_index}@${domain}'\n", "block", "user2@load.test", "blocking.block"),
        ("  - block: {jid: spammer@example.org}\n", "block", "spammer@example.org", "blocking.block"),
        ("  - unblock: spammer@example.org\n", "unblock", "spammer@example.org", "blocking.unblock"),
        ("  - unblock\n", "unblock", nil, "blocking.unblock"),
    ])
    func aChangeIsAnIQSetTimedUntilItsResult(step: String, element: String, jid: String?, metric: String) throws {
        var driver = try Self.driver(step)
        try driver.logIn()
        let request = try #require(driver.sent().last)
        #expect(request.name == "iq" && request.attribute("type") == "set")
        let change = try #require(request.firstChild(named: element, namespace: "urn:xmpp:blocking"), "\(request)")
        #expect(change.children(named: "item", namespace: "urn:xmpp:blocking").map { $0.attribute("jid") } == (jid.map { [$0] } ?? []))
        driver.advance(by: .milliseconds(7))
        try driver.receive("<iq type='result' id='\(request.attribute("id") ?? "")'/>")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.latency[metric]?.count == 1)
        #expect(!driver.ended && snapshot.errors.isEmpty)
    }

    @Test func theListIsTimedAndItsItemsCounted() throws {
        var driver = try Self.driver("  - blocklist\n")
        try driver.logIn()
        let request = try #require(driver.sent().last)
        #expect(request.attribute("type") == "get" && request.firstChild(named: "blocklist", namespace: "urn:xmpp:blocking") != nil)
        try driver.receive(
            "<iq type='result' id='\(request.attribute("id") ?? "")'><blocklist xmlns='urn:xmpp:blocking'><item jid='a@x'/><item jid='b@x'/></blocklist></iq>"
        )
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.latency["blocking.list"]?.count == 1)
        #expect(snapshot.counters["blocklist_items"] == 2)
    }

    @Test func aPushedChangeIsAnsweredAndCountedNotRefused() throws {
        var driver = try Self.driver("  - blocklist\n")
        try driver.logIn()
        let id = try #require(driver.sent().last?.attribute("id"))
        try driver.receive("<iq type='result' id='\(id)'><blocklist xmlns='urn:xmpp:blocking'/></iq>")
        try driver.receive(
            "<iq type='set' id='push1' from='user1@load.test'><block xmlns='urn:xmpp:blocking'><item jid='c@x'/></block></iq>")
        let answer = try #require(driver.sent().last)
        #expect(answer.name == "iq" && answer.attribute("type") == "result" && answer.attribute("id") == "push1")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counters["blocking_pushes"] == 1)
        #expect(snapshot.counter(.unexpectedStanzas) == 0)
    }

    @Test func aServerWithoutTheCommandIsSaidNotFailed() throws {
        var driver = try Self.driver("  - block: x@y\n")
        try driver.logIn()
        let id = try #require(driver.sent().last?.attribute("id"))
        try driver.receive(
            "<iq type='error' id='\(id)'><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counters["blocking_unsupported"] == 1)
        #expect(snapshot.latency["blocking.block"] == nil && !driver.ended && snapshot.errors.isEmpty)
        #expect(ServerNotice.notices(snapshot).map(\.kind) == ["blocking-unsupported"])
    }

    /// Every feature step row names a registered feature: a row without its feature would fail its
    /// steps at run time (`feature-unknown-…`).
    @Test func everyRowsFeatureIsRegistered() {
        for row in FeatureStepKind.rows {
            #expect(SessionFeatures.index(named: row.feature) != nil, "\(row.key) → \(row.feature)")
        }
    }
}
