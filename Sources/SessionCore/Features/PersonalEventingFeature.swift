import LoadProfile
// XEP-0163 personal eventing as a request feature: a PEP publish, and its notification timed.
import LoadResults
import XMPPCore

/// Personal eventing (XEP-0163 over XEP-0060): `pep` or `pep: {node: N, payload_size: B}` publishes
/// one item of B bytes to the account's own node N and waits for the result, timed (`pep.publish`);
/// the item id carries its send time, so the notification coming back (to a profile advertising
/// `<node>+notify` in its XEP-0115 caps) is timed from the send (`pep.notify`). A server without PEP:
/// unmeasured, counted as `pep_unsupported` (notice `pep-unsupported`).
final class PersonalEventingFeature: RequestFeature {
    static let name = "pep"
    static let pubsub = "http://jabber.org/protocol/pubsub"
    static let pubsubEvent = "http://jabber.org/protocol/pubsub#event"
    /// The payload of a PEP item: `<load xmlns="urn:xmppload:pep:0">` with `payloadBytes` of text.
    static let payload = "urn:xmppload:pep:0"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("pep_unsupported", .unsupported(feature: "pep", title: "XEP-0163 personal eventing (PEP)"))
    ]
    private var awaited: UInt32 = 0

    init() {}

    /// A publishing profile advertises `<node>+notify`, or the server sends it no notification to time.
    static func capsFeatures(for step: FeatureStep) -> [String] {
        [(step.text("node") ?? FeatureStepKind.defaultPEPNode) + "+notify"]
    }

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        _ = context.tools.nextRequestID()
        awaited = context.tools.requestCounter
        let id = "q\(awaited)"
        let size = step.number("payload_size") ?? 128
        let content = XMLElement("load", namespace: Self.payload, children: size > 0 ? [.text(String(repeating: "x", count: size))] : [])
        let item = XMLElement(
            "item", namespace: Self.pubsub, attributes: ["id": Self.itemID(id: id, sentNanoseconds: s.now.stampNanoseconds)],
            children: [.element(content)])
        let publish = XMLElement(
            "publish", namespace: Self.pubsub, attributes: ["node": step.text("node") ?? FeatureStepKind.defaultPEPNode],
            children: [.element(item)])
        s.send(Stanza.iq(type: "set", id: id, child: XMLElement("pubsub", namespace: Self.pubsub, children: [.element(publish)])))
        return .waiting(timeout: context.timeout)
    }

    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome? {
        guard let outcome = context.iqAnswer(stanza, to: awaited, unsupported: 0, &s) else { return nil }
        awaited = 0
        return outcome
    }

    /// A notification of an item this session published: from its own PEP service (its bare JID),
    /// the item id carrying the send time on this generator's clock; timed as `pep.notify`.
    func push(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> Bool {
        guard stanza.name == "message", let event = stanza.firstChild(named: "event", namespace: Self.pubsubEvent),
            let items = event.firstChild(named: "items", namespace: Self.pubsubEvent),
            let item = items.firstChild(named: "item", namespace: Self.pubsubEvent),
            let sent = item.attribute("id").flatMap(Self.sentNanoseconds(ofItemID:))
        else { return false }
        let now = s.now.stampNanoseconds
        if sent <= now, stanza.attribute("from") == s.identity.bareJID {
            let elapsed = now &- sent
            s.record(.latency(s.settings.metrics.pepNotify, corrected: elapsed, service: elapsed))
        }
        return true
    }

    /// A PEP item id that carries its send time: `t<nanoseconds>-<request id>`.
    static func itemID(id: String, sentNanoseconds: UInt64) -> String { "t\(sentNanoseconds)-\(id)" }

    /// The send time of a PEP item id written by `itemID`; nil for other ids (another publisher's).
    static func sentNanoseconds(ofItemID itemID: String) -> UInt64? {
        guard itemID.hasPrefix("t"), let dash = itemID.firstIndex(of: "-") else { return nil }
        return UInt64(itemID[itemID.index(after: itemID.startIndex)..<dash])
    }
}
