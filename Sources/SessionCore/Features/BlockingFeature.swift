// XEP-0191 blocking command as a request feature: block, unblock and the blocklist.
import LoadProfile
import LoadResults
import XMPPCore

/// The blocking command (XEP-0191), RTB's default extension: `block: JID` (or `{jid: …}`) and
/// `unblock: JID` (bare `unblock`: every blocked JID) send an iq set and wait for its result, timed
/// (`blocking.block`, `blocking.unblock`); `blocklist` asks for the list and counts its items
/// (`blocklist_items`), timed (`blocking.list`). The server then pushes every change to the resources
/// that asked for the list (XEP-0191 §3.4); those pushes are answered and counted (`blocking_pushes`).
/// A server without the command answers `service-unavailable` (or `feature-not-implemented`): the
/// step completes unmeasured, counted as `blocking_unsupported` and said as `blocking-unsupported`.
final class BlockingFeature: RequestFeature {
    static let name = "blocking"
    static let namespace = "urn:xmpp:blocking"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("blocking_unsupported", .unsupported(feature: "blocking", title: "XEP-0191 blocking command")),
        ("blocklist_items", nil),
        ("blocking_pushes", nil),
    ]
    /// The request in flight (`q<n>`; 0: none) and whether it is the list's.
    private var awaited: UInt32 = 0
    private var listing = false

    init() {}

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        _ = context.tools.nextRequestID()
        awaited = context.tools.requestCounter
        listing = step.operation == "list"
        let request: XMLElement
        if listing {
            request = Stanza.iq(type: "get", id: "q\(awaited)", child: XMLElement("blocklist", namespace: Self.namespace))
        } else {
            let items = step.template("jid").map { template -> [XMLNode] in
                [.element(XMLElement("item", namespace: Self.namespace, attributes: ["jid": context.tools.render(template, s)]))]
            }
            let change = XMLElement(step.operation == "unblock" ? "unblock" : "block", namespace: Self.namespace, children: items ?? [])
            request = Stanza.iq(type: "set", id: "q\(awaited)", child: change)
        }
        s.send(request)
        return .waiting(timeout: context.timeout)
    }

    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome? {
        guard let outcome = context.iqAnswer(stanza, to: awaited, unsupported: 0, &s) else { return nil }
        if listing, case .completed(measured: true) = outcome,
            let list = stanza.firstChild(named: "blocklist", namespace: Self.namespace)
        {
            context.count(1, by: UInt64(list.children(named: "item", namespace: Self.namespace).count), &s)
        }
        awaited = 0
        return outcome
    }

    /// A change the server pushes (`<iq type='set'><block/>` or `<unblock/>`): answered, counted.
    func push(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> Bool {
        guard stanza.name == "iq", stanza.attribute("type") == "set",
            stanza.firstChild(named: "block", namespace: Self.namespace) != nil
                || stanza.firstChild(named: "unblock", namespace: Self.namespace) != nil
        else { return false }
        s.send(Stanza.iq(type: "result", id: stanza.attribute("id") ?? "", to: stanza.attribute("from")))
        context.count(2, &s)
        return true
    }
}
