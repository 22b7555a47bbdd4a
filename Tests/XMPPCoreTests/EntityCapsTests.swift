import Testing

@testable import XMPPCore

/// XEP-0115 capabilities: the verification string's hash as the XEP computes it, the `<c/>` element,
/// and which disco#info requests get our answer.
@Suite struct EntityCapsTests {
    @Test func verIsTheSpecificationsSimpleExample() {
        // XEP-0115 §5.2: identity client/pc//Exodus 0.9.1 with these four features.
        let caps = EntityCaps(
            features: ["http://jabber.org/protocol/disco#items", "http://jabber.org/protocol/muc"], name: "Exodus 0.9.1")
        #expect(caps.ver == "QgayPKawpkPSDYmwT/WM94uAlu0=")
        #expect(
            caps.features == [
                "http://jabber.org/protocol/caps", "http://jabber.org/protocol/disco#info",
                "http://jabber.org/protocol/disco#items", "http://jabber.org/protocol/muc",
            ])
    }

    @Test func elementCarriesHashNodeAndVer() {
        let caps = EntityCaps(features: ["urn:xmppload:pep:0+notify"])
        let c = caps.element
        #expect(c.name == "c" && c.namespace == EntityCaps.namespace)
        #expect(c.attribute("hash") == "sha-1" && c.attribute("node") == EntityCaps.node && c.attribute("ver") == caps.ver)
    }

    @Test(arguments: [
        (node: nil as String?, type: "get", answered: true),
        (node: "\(EntityCaps.node)#VER", type: "get", answered: true),
        (node: "\(EntityCaps.node)#other", type: "get", answered: false),
        (node: nil, type: "set", answered: false),
    ])
    func discoInfoAnswer(node: String?, type: String, answered: Bool) {
        let caps = EntityCaps(features: ["urn:xmppload:pep:0+notify"])
        var query = XMLElement("query", namespace: XMPPNamespace.discoInfo)
        if let node { query.setAttribute("node", to: node.replacingOccurrences(of: "VER", with: caps.ver)) }
        let request = Stanza.iq(type: type, id: "d1", to: "user1@load.test/r", child: query)
        var asked = request
        asked.setAttribute("from", to: "load.test")
        let answer = caps.discoInfoAnswer(to: asked)
        #expect((answer != nil) == answered)
        guard let answer else { return }
        #expect(answer.attribute("type") == "result" && answer.attribute("id") == "d1" && answer.attribute("to") == "load.test")
        let result = answer.firstChild(named: "query", namespace: XMPPNamespace.discoInfo)
        let features = result?.children(named: "feature", namespace: XMPPNamespace.discoInfo).compactMap { $0.attribute("var") }
        #expect(features?.contains("urn:xmppload:pep:0+notify") == true)
        #expect(result?.attribute("node") == query.attribute("node"))
    }
}
