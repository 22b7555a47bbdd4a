// The stanzas the roster, presence and iq steps send, built from a step and a template renderer.
import LoadProfile
import XMPPCore

/// What the roster, presence and iq steps send: pure builders from a step's action and a renderer of
/// its templates (`${user}`, `${index}`…). The machine decides when to send and what to wait for
/// (`Waiting`); the MUC steps' stanzas are `RoomMembership`'s, the extension steps' `ExtensionRequests`'.
enum StepRequests {
    /// The roster query (`get`) or roster push (`add`, `rename`, `remove`) of a roster step as iq `id`.
    static func roster(_ action: RosterAction, id: String, render: (Template) -> String) -> XMLElement {
        func bare(_ template: Template) -> String { StepRequests.bare(render(template)) }
        var attributes: [XMLAttribute] = []
        var children: [XMLNode] = []
        switch action {
        case .get:
            return Stanza.iq(type: "get", id: id, child: XMLElement("query", namespace: XMPPNamespace.roster))
        case .add(let jid, let name, let groups):
            attributes.append(XMLAttribute("jid", bare(jid)))
            if let name { attributes.append(XMLAttribute("name", render(name))) }
            children = groups.map { .element(Stanza.textElement("group", $0, namespace: XMPPNamespace.roster)) }
        case .rename(let jid, let name):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("name", render(name)))
        case .remove(let jid):
            attributes.append(XMLAttribute("jid", bare(jid)))
            attributes.append(XMLAttribute("subscription", "remove"))
        }
        let item = XMLElement("item", namespace: XMPPNamespace.roster, attributes: attributes, children: children)
        return Stanza.iq(type: "set", id: id, child: XMLElement("query", namespace: XMPPNamespace.roster, children: [.element(item)]))
    }

    /// The presence a presence step sends (an available one carries `caps`, when given). Only
    /// `available` waits (for its echo, `Waiting.ownPresence`).
    static func presence(_ action: PresenceAction, caps: EntityCaps?, render: (Template) -> String) -> XMLElement {
        switch action {
        case .available(let show, let status, let priority):
            return Stanza.presence(show: show, status: status.map(render), priority: priority, extra: caps.map { [$0.element] } ?? [])
        case .directed(let to, let type, let show, let status):
            return Stanza.presence(to: render(to), type: type, show: show, status: status.map(render))
        case .unavailable(let status):
            return Stanza.presence(type: "unavailable", status: status.map(render))
        case .subscribe(let to):
            return Stanza.presence(to: bare(render(to)), type: "subscribe")
        case .unsubscribe(let to):
            return Stanza.presence(to: bare(render(to)), type: "unsubscribe")
        }
    }

    /// What an iq step sends.
    enum IQRequest: Equatable {
        /// This iq `get`; its result completes the step.
        case stanza(XMLElement)
        /// This text as is; `expectResult`: a result with the step's id completes the step.
        case raw(String, expectResult: Bool)
    }

    /// The request of an iq step as iq `id`; queries without a `to:` go to `domain` (a vCard to our own
    /// account). `variable` resolves the raw step's `${…}` names other than `${id}`.
    static func iq(
        _ action: IQAction, id: String, domain: String, render: (Template) -> String, variable: (String) -> String?
    ) -> IQRequest {
        let to: String?
        let query: XMLElement
        switch action {
        case .ping(let template):
            to = template.map(render) ?? domain
            query = XMLElement("ping", namespace: XMPPNamespace.ping)
        case .discoInfo(let template):
            to = template.map(render) ?? domain
            query = XMLElement("query", namespace: XMPPNamespace.discoInfo)
        case .version(let template):
            to = template.map(render) ?? domain
            query = XMLElement("query", namespace: XMPPNamespace.version)
        case .vcard(let template):
            to = template.map(render)
            query = XMLElement("vCard", namespace: XMPPNamespace.vcard)
        case .raw(let xml, let expectResult):
            return .raw(xml.render { name in name == SessionVariable.id.rawValue ? id : variable(name) }, expectResult: expectResult)
        }
        return .stanza(Stanza.iq(type: "get", id: id, to: to, child: query))
    }

    /// The bare form of a rendered JID (unchanged when it does not parse as one).
    static func bare(_ jid: String) -> String { (try? JID(jid))?.bare.description ?? jid }
}
