import Testing
import XMPPCore

/// XEP-0198 bookkeeping as plain values: queueing, acks, ack requests, the grant, resumption.
@Suite struct StreamManagementStateTests {
    static func message(_ n: Int) -> XMLElement {
        Stanza.message(to: "b@load.test", body: "m\(n)")
    }

    static func state(sending count: Int) -> StreamManagementState {
        var state = StreamManagementState()
        for n in 0..<count { _ = state.didSend(message(n), requestEvery: 1000) }
        return state
    }

    @Test(arguments: [
        // sent, ack h, forgotten (nil: more than sent), still unacknowledged
        (5, 0, 0 as Int?, 5), (5, 3, 3, 2), (5, 5, 5, 0), (5, 6, nil, 5), (0, 1, nil, 0),
    ])
    func acksForgetWhatTheServerHandled(sent: Int, h: UInt32, forgotten: Int?, left: Int) {
        var state = Self.state(sending: sent)
        #expect(state.acknowledge(h) == forgotten)
        #expect(state.unacknowledged.count == left)
        #expect(state.unacknowledged.first == (left > 0 ? Self.message(sent - left) : nil), "the oldest are forgotten first")
    }

    @Test func acksAreCumulativeAndRepeatedAcksChangeNothing() {
        var state = Self.state(sending: 4)
        #expect(state.acknowledge(2) == 2)
        #expect(state.acknowledge(2) == 0)
        #expect(state.acknowledge(1) == nil, "an ack below the last one would be more than we sent, mod 2^32")
        #expect(state.acknowledge(4) == 2)
        #expect(state.unacknowledged.isEmpty)
    }

    @Test(arguments: [(1, [false, false, false]), (2, [false, true, false]), (3, [false, false, true])])
    func anAckIsRequestedEveryNStanzas(every: Int, expected: [Bool]) {
        var state = StreamManagementState()
        #expect((0..<3).map { state.didSend(Self.message($0), requestEvery: every) } == (every == 1 ? [true, true, true] : expected))
    }

    @Test func onlyStanzasAfterEnabledCountAsHandled() {
        var state = StreamManagementState()
        state.didReceiveStanza()
        #expect(state.handled == 0, "before <enabled/> nothing counts")
        state.enabled(.init(resumptionID: "abc", location: nil, maxSeconds: 300))
        state.didReceiveStanza()
        state.didReceiveStanza()
        #expect(state.answer().attribute("h") == "2")
        #expect(state.resume()?.attribute("previd") == "abc" && state.resume()?.attribute("h") == "2")
    }

    @Test func resumingResendsWhatTheServerDidNotHandleAndCountsItAgain() throws {
        var state = Self.state(sending: 5)
        let resumed = state.resumed(serverHandled: 3)
        let resend = try #require(resumed)
        #expect(resend == [Self.message(3), Self.message(4)])
        #expect(state.unacknowledged.isEmpty && state.sent == 3)
        _ = state.didSend(resend[0], requestEvery: 100)
        _ = state.didSend(resend[1], requestEvery: 100)
        #expect(state.acknowledge(5) == 2)
        var short = Self.state(sending: 2)
        #expect(short.resumed(serverHandled: 3) == nil)
    }

    @Test(
        arguments: [
            ("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='true' max='300' location='127.0.0.2:5222'/>", "s1", "127.0.0.2:5222", 300),
            ("<enabled xmlns='urn:xmpp:sm:3' id='s1' resume='1'/>", "s1", nil, nil),
            ("<enabled xmlns='urn:xmpp:sm:3' id='s1'/>", nil, nil, nil),
            ("<enabled xmlns='urn:xmpp:sm:3' resume='true'/>", nil, nil, nil),
        ] as [(String, String?, String?, Int?)])
    func theGrantSaysWhetherAndWhereToResume(xml: String, id: String?, location: String?, max: Int?) throws {
        let parser = StanzaParser()
        let header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        let grant = StreamManagementState.grant(in: try parser.parseElement(Array(xml.utf8), in: header))
        #expect(grant == .init(resumptionID: id, location: location, maxSeconds: max))
    }

    @Test func onlyMessagesPresencesAndIQsAreStanzas() {
        #expect(StreamManagementState.isStanza(Stanza.presence()))
        #expect(StreamManagementState.isStanza(Stanza.iq(type: "get", id: "1")))
        #expect(!StreamManagementState.isStanza(StreamManagementState.request))
        #expect(!StreamManagementState.isStanza(XMLElement("auth", namespace: XMPPNamespace.sasl)))
    }
}
