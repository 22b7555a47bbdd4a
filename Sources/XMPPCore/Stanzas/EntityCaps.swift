// XEP-0115 entity capabilities: what a session says it supports, and its disco#info answer.
import Foundation

/// XEP-0115 entity capabilities of a client: a `<c/>` element for its available presence and the
/// XEP-0030 disco#info answer a server asks for it. A PEP service delivers a node's notifications only
/// to resources whose capabilities include `<node>+notify` (XEP-0163 §4), so a session that publishes
/// and wants to time its own notification advertises that.
///
/// Invariants: `ver` is the XEP-0115 §5 verification string of the identity and the sorted features,
/// SHA-1, base64 — a server that recomputes it finds the same value.
public struct EntityCaps: Sendable, Equatable {
    public static let namespace = "http://jabber.org/protocol/caps"
    /// Our software's caps node (`node#ver` names the disco#info answer).
    public static let node = "https://github.com/xmppload/xmppload"
    /// The features, sorted (XEP-0115 §5.1 rule 4), always including caps and disco#info.
    public let features: [String]
    public let ver: String

    /// The name of our `client/pc` identity.
    public let name: String

    /// Capabilities for `features` (besides disco#info and caps, which are always there); the
    /// identity is `client/pc` named `name`.
    public init(features: [String], name: String = "xmppload") {
        let all = Set(features + [Self.namespace, XMPPNamespace.discoInfo])
        self.features = all.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        self.name = name
        var verification = "client/pc//\(name)<"
        for feature in self.features { verification += feature + "<" }
        ver = Base64.encode(CryptoPrimitives.hash(.sha1, Array(verification.utf8)))
    }

    /// The `<c/>` element for an available presence.
    public var element: XMLElement {
        XMLElement("c", namespace: Self.namespace, attributes: ["hash": "sha-1", "node": Self.node, "ver": ver])
    }

    /// The result answering `request` when it is a disco#info get for us (no node, or `node#ver`);
    /// nil for anything else.
    public func discoInfoAnswer(to request: XMLElement) -> XMLElement? {
        guard request.name == "iq", request.attribute("type") == "get",
            let query = request.firstChild(named: "query", namespace: XMPPNamespace.discoInfo)
        else { return nil }
        let asked = query.attribute("node")
        guard asked == nil || asked == "\(Self.node)#\(ver)" else { return nil }
        var children: [XMLNode] = [
            .element(XMLElement("identity", namespace: XMPPNamespace.discoInfo, attributes: ["category": "client", "type": "pc", "name": name]))
        ]
        for feature in features {
            children.append(.element(XMLElement("feature", namespace: XMPPNamespace.discoInfo, attributes: ["var": feature])))
        }
        var answer = XMLElement("query", namespace: XMPPNamespace.discoInfo, children: children)
        if let asked { answer.setAttribute("node", to: asked) }
        var result = Stanza.iqResult(answering: request)
        result.children = [.element(answer)]
        return result
    }
}
