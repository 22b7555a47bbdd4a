import LoadProfile
import LoadResults
import Testing
import XMPPCore

@testable import SessionCore

/// The extension steps on virtual time: what each sends, what completes it, and a server without the
/// extension — the step completes unmeasured and is counted, never a failed session.
@Suite struct ExtensionStepTests {
    static func driver(_ step: String) throws -> MachineDriver {
        try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - \(step)\n  - stay_online"))
    }

    static func snapshot(_ driver: MachineDriver) -> IntervalSnapshot {
        driver.host.recorder.takeSnapshot(start: 0, end: 1)
    }

    static let unsupported =
        "<error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>"

    @Test(arguments: [
        ("carbons: enable", "enable", "urn:xmpp:carbons:2", "carbons.enable"),
        ("carbons: disable", "disable", "urn:xmpp:carbons:2", "carbons.disable"),
        ("mam: {max: 7}", "query", "urn:xmpp:mam:2", "mam.query"),
        ("pep", "pubsub", "http://jabber.org/protocol/pubsub", "pep.publish"),
    ])
    func anIQStepIsTimedUntilItsResult(step: String, child: String, namespace: String, metric: String) throws {
        var driver = try Self.driver(step)
        try driver.logIn()
        let request = try #require(driver.sent().last)
        #expect(request.name == "iq" && request.attribute("type") == "set")
        #expect(request.firstChild(named: child, namespace: namespace) != nil, "\(request)")
        driver.advance(by: .milliseconds(12))
        try driver.receive("<iq type='result' id='\(request.attribute("id") ?? "")'/>")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.latency[metric]?.count == 1)
        #expect(!driver.ended && snapshot.errors.isEmpty)
    }

    @Test(arguments: [
        ("carbons: enable", "carbons_unsupported", "carbons.enable"),
        ("mam", "mam_unsupported", "mam.query"),
        ("pep", "pep_unsupported", "pep.publish"),
    ])
    func anUnsupportedAnswerIsCountedNotFailed(step: String, counter: String, metric: String) throws {
        var driver = try Self.driver(step)
        try driver.logIn()
        let id = try #require(driver.sent().last?.attribute("id"))
        try driver.receive("<iq type='error' id='\(id)'>\(Self.unsupported)</iq>")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counters[counter] == 1)
        #expect(snapshot.latency[metric] == nil, "nothing to time")
        #expect(!driver.ended && snapshot.errors.isEmpty)
        // The feature registered the counter with its notice, and the snapshot carries both.
        #expect(ServerNotice.notices(snapshot).map(\.kind) == ["\(counter.replacingOccurrences(of: "_unsupported", with: ""))-unsupported"])
    }

    @Test func anotherErrorFailsTheStepAsAnyIQError() throws {
        var driver = try Self.driver("mam")
        try driver.logIn()
        let id = try #require(driver.sent().last?.attribute("id"))
        try driver.receive(
            "<iq type='error' id='\(id)'><error type='auth'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
        #expect(driver.ended)
        #expect(Self.snapshot(driver).errors == ["stanza-forbidden": 1])
    }

    @Test func clientStateIsANonzaWhenOfferedAndSaidWhenNot() throws {
        var offered = try Self.driver("csi: inactive")
        try offered.logIn(features: "<csi xmlns='urn:xmpp:csi:0'/>")
        let nonza = try #require(offered.sent().last)
        #expect(nonza.name == "inactive" && nonza.namespace == "urn:xmpp:csi:0")
        #expect(Self.snapshot(offered).counters["csi_unsupported", default: 0] == 0)

        var notOffered = try Self.driver("csi: inactive")
        try notOffered.logIn()
        #expect(!notOffered.sent().contains { $0.name == "inactive" }, "nothing sent to a server without CSI")
        #expect(Self.snapshot(notOffered).counters["csi_unsupported", default: 0] == 1)
        #expect(!notOffered.ended)
    }

    @Test func archivedMessagesAreCountedAndNoMessageOfTheRun() throws {
        var driver = try Self.driver("mam")
        try driver.logIn()
        let id = try #require(driver.sent().last?.attribute("id"))
        let archived =
            "<message to='user1@load.test/r1'><result xmlns='urn:xmpp:mam:2' queryid='\(id)' id='a1'><forwarded xmlns='urn:xmpp:forward:0'><message from='user2@load.test/r' type='chat'><body>hi</body></message></forwarded></result></message>"
        try driver.receive(archived)
        try driver.receive(archived)
        try driver.receive("<iq type='result' id='\(id)'><fin xmlns='urn:xmpp:mam:2' complete='true'/></iq>")
        let snapshot = Self.snapshot(driver)
        #expect(snapshot.counters["mam_messages"] == 2)
        #expect(snapshot.counter(.messagesReceived) == 0)
        #expect(snapshot.latency["mam.query"]?.count == 1)
    }

    @Test func aPEPNotificationOfOurItemIsTimedFromThePublish() throws {
        var driver = try Self.driver("pep: {node: 'urn:example:n'}")
        try driver.logIn()
        let publish = try #require(driver.sent().last)
        let item = try #require(
            publish.firstChild(named: "pubsub", namespace: PersonalEventingFeature.pubsub)?
                .firstChild(named: "publish", namespace: PersonalEventingFeature.pubsub)?
                .firstChild(named: "item", namespace: PersonalEventingFeature.pubsub)?.attribute("id"))
        driver.advance(by: .milliseconds(25))
        try driver.receive(
            "<message from='user1@load.test'><event xmlns='http://jabber.org/protocol/pubsub#event'><items node='urn:example:n'><item id='\(item)'/></items></event></message>"
        )
        let notify = try #require(Self.snapshot(driver).latency["pep.notify"])
        #expect(notify.count == 1)
        // Someone else's item is not timed: an id we did not write, or one from another account's service.
        try driver.receive(
            "<message from='user2@load.test'><event xmlns='http://jabber.org/protocol/pubsub#event'><items node='n'><item id='current'/></items></event></message>"
        )
        try driver.receive(
            "<message from='user2@load.test'><event xmlns='http://jabber.org/protocol/pubsub#event'><items node='urn:example:n'><item id='\(item)'/></items></event></message>"
        )
        #expect(Self.snapshot(driver).latency["pep.notify"] == nil, "no new reading since the last snapshot")
    }

    @Test func aPublishingSessionAdvertisesNotifyAndAnswersTheServersDiscoInfo() throws {
        var driver = try MachineDriver(
            profile: SessionMachineTests.profile("  - login\n  - presence: available\n  - pep: {node: 'urn:example:n'}\n  - stay_online"))
        try driver.logIn()
        let presence = try #require(driver.sent().last)
        let caps = try #require(driver.machine.script.entityCaps)
        #expect(caps.features.contains("urn:example:n+notify"))
        #expect(presence.firstChild(named: "c", namespace: EntityCaps.namespace)?.attribute("ver") == caps.ver)
        // The server asks what the caps mean (XEP-0115 §6.2): the machine answers, nothing is rejected.
        try driver.receive(
            "<iq type='get' id='disco1' from='user1@load.test' to='user1@load.test/r1'><query xmlns='http://jabber.org/protocol/disco#info' node='\(EntityCaps.node)#\(caps.ver)'/></iq>"
        )
        let answer = try #require(driver.sent().last)
        #expect(answer.attribute("type") == "result" && answer.attribute("id") == "disco1")
        // A profile that publishes nothing advertises nothing.
        var plain = try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - presence: available\n  - stay_online"))
        try plain.logIn()
        #expect(plain.machine.script.entityCaps == nil)
        #expect(try #require(plain.sent().last).firstChild(named: "c", namespace: EntityCaps.namespace) == nil)
    }

    @Test(arguments: ["t123-q1", "t0-x"])
    func itemIDsCarryTheirSendTime(id: String) {
        let sent = PersonalEventingFeature.sentNanoseconds(ofItemID: id)
        #expect(sent.map { PersonalEventingFeature.itemID(id: String(id.split(separator: "-")[1]), sentNanoseconds: $0) } == id)
        #expect(PersonalEventingFeature.sentNanoseconds(ofItemID: "current") == nil)
        #expect(PersonalEventingFeature.sentNanoseconds(ofItemID: "tx-1") == nil)
    }
}
