import LoadProfile
import LoadResults
import XMPPCore

/// The protocol-extension steps (`ExtensionStep`) as one table: what each sends, what answers it, which
/// error answers mean "the server does not support it", and the counter that says so. The machine
/// only routes: `StepRunner.startExtension` sends the request and waits (or not), and the answer
/// arrives as an `.extensionResponse` wait.
enum ExtensionRequests {
    /// What starting a step does.
    enum Start: Equatable {
        /// Send the iq and wait for its answer (`Waiting.extensionResponse`).
        case iq(XMLElement)
        /// Send a nonza nothing answers; the step completes unmeasured.
        case nonza(XMLElement)
        /// The login already showed the server lacks it (CSI without its stream feature): count it and go on.
        case unsupported
    }

    static let carbons = "urn:xmpp:carbons:2"
    static let clientState = "urn:xmpp:csi:0"
    static let archive = "urn:xmpp:mam:2"
    static let resultSetManagement = "http://jabber.org/protocol/rsm"
    static let pubsub = "http://jabber.org/protocol/pubsub"
    static let pubsubEvent = "http://jabber.org/protocol/pubsub#event"
    /// The payload of a PEP item: `<load xmlns="urn:xmppload:pep:0">` with `payloadBytes` of text.
    static let payload = "urn:xmppload:pep:0"

    /// Error conditions that mean the server (or the account's service) does not implement the request.
    static let unsupportedConditions: Set<String> = ["feature-not-implemented", "service-unavailable"]

    /// The request for `step`: `id` is the iq id (also the MAM query id and the PEP item id's prefix),
    /// `with` the rendered MAM filter, `sentNanoseconds` the send time stamped into the PEP item id so
    /// its notification can be timed, `offersClientState` whether the login's features offered CSI.
    static func start(_ step: ExtensionStep, id: String, with: String?, sentNanoseconds: UInt64, offersClientState: Bool) -> Start {
        switch step {
        case .carbons(let enable):
            return .iq(Stanza.iq(type: "set", id: id, child: XMLElement(enable ? "enable" : "disable", namespace: carbons)))
        case .clientState(let active):
            guard offersClientState else { return .unsupported }
            return .nonza(XMLElement(active ? "active" : "inactive", namespace: clientState))
        case .archiveQuery(let max, _):
            var children: [XMLNode] = []
            if let with {
                children.append(.element(dataForm(fields: [("FORM_TYPE", archive), ("with", with)])))
            }
            let set = XMLElement(
                "set", namespace: resultSetManagement,
                children: [.element(XMLElement("max", namespace: resultSetManagement, children: [.text(String(max))]))])
            children.append(.element(set))
            let query = XMLElement("query", namespace: archive, attributes: ["queryid": id], children: children)
            return .iq(Stanza.iq(type: "set", id: id, child: query))
        case .publish(let node, let payloadBytes):
            let content = XMLElement(
                "load", namespace: payload, children: payloadBytes > 0 ? [.text(String(repeating: "x", count: payloadBytes))] : [])
            let item = XMLElement(
                "item", namespace: pubsub, attributes: ["id": itemID(id: id, sentNanoseconds: sentNanoseconds)], children: [.element(content)])
            let publish = XMLElement("publish", namespace: pubsub, attributes: ["node": node], children: [.element(item)])
            return .iq(Stanza.iq(type: "set", id: id, child: XMLElement("pubsub", namespace: pubsub, children: [.element(publish)])))
        }
    }

    /// The counter that says the server does not support `feature`.
    static func unsupportedCounter(_ feature: ExtensionFeature) -> Counter {
        switch feature {
        case .carbons: return .carbonsUnsupported
        case .clientState: return .clientStateUnsupported
        case .archive: return .archiveUnsupported
        case .personalEventing: return .personalEventingUnsupported
        }
    }

    /// A PEP item id that carries its send time: `t<nanoseconds>-<request id>`.
    static func itemID(id: String, sentNanoseconds: UInt64) -> String { "t\(sentNanoseconds)-\(id)" }

    /// The send time of a PEP item id written by `itemID`; nil for other ids (another publisher's).
    static func sentNanoseconds(ofItemID itemID: String) -> UInt64? {
        guard itemID.hasPrefix("t"), let dash = itemID.firstIndex(of: "-") else { return nil }
        return UInt64(itemID[itemID.index(after: itemID.startIndex)..<dash])
    }

    /// What a pushed stanza is to the extension steps: an archived message of a MAM page, a PEP
    /// notification of an item we published (with its send time), or neither.
    enum Push: Equatable {
        case archivedMessage
        case notification(sentNanoseconds: UInt64)
        case none
    }

    static func push(_ stanza: XMLElement) -> Push {
        guard stanza.name == "message" else { return .none }
        if stanza.firstChild(named: "result", namespace: archive) != nil { return .archivedMessage }
        guard let event = stanza.firstChild(named: "event", namespace: pubsubEvent),
            let items = event.firstChild(named: "items", namespace: pubsubEvent),
            let item = items.firstChild(named: "item", namespace: pubsubEvent),
            let sent = item.attribute("id").flatMap(sentNanoseconds(ofItemID:))
        else { return .none }
        return .notification(sentNanoseconds: sent)
    }

    private static func dataForm(fields: [(String, String)]) -> XMLElement {
        var form = XMLElement("x", namespace: XMPPNamespace.dataForms, attributes: ["type": "submit"])
        for (name, value) in fields {
            var field = XMLElement("field", namespace: XMPPNamespace.dataForms, attributes: ["var": name])
            if name == "FORM_TYPE" { field.setAttribute("type", to: "hidden") }
            field.children = [.element(XMLElement("value", namespace: XMPPNamespace.dataForms, children: [.text(value)]))]
            form.children.append(.element(field))
        }
        return form
    }
}
