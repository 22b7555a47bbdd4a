import LoadProfile
// XEP-0313 message archive management as a request feature: one page of the account's archive.
import LoadResults
import XMPPCore

/// Message archive management (XEP-0313): `mam` or `mam: {max: N, with: JID}` asks for one page (at
/// most `max` messages, optionally with one correspondent) and waits for the query's result, timed
/// (`mam.query`); the archived messages the page brings are counted (`mam_messages`). A server
/// without MAM: the step completes unmeasured, counted as `mam_unsupported` (notice `mam-unsupported`).
final class ArchiveFeature: RequestFeature {
    static let name = "mam"
    static let namespace = "urn:xmpp:mam:2"
    static let resultSetManagement = "http://jabber.org/protocol/rsm"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("mam_unsupported", .unsupported(feature: "mam", title: "XEP-0313 message archive management")),
        ("mam_messages", nil),
    ]
    private var awaited: UInt32 = 0

    init() {}

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        _ = context.tools.nextRequestID()
        awaited = context.tools.requestCounter
        let id = "q\(awaited)"
        var children: [XMLNode] = []
        if let template = step.template("with") {
            let with = context.tools.render(template, s)
            children.append(.element(Self.dataForm(fields: [("FORM_TYPE", Self.namespace), ("with", with)])))
        }
        let max = XMLElement("max", namespace: Self.resultSetManagement, children: [.text(String(step.number("max") ?? 20))])
        children.append(.element(XMLElement("set", namespace: Self.resultSetManagement, children: [.element(max)])))
        let query = XMLElement("query", namespace: Self.namespace, attributes: ["queryid": id], children: children)
        s.send(Stanza.iq(type: "set", id: id, child: query))
        return .waiting(timeout: context.timeout)
    }

    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome? {
        guard let outcome = context.iqAnswer(stanza, to: awaited, unsupported: 0, &s) else { return nil }
        awaited = 0
        return outcome
    }

    /// An archived message of a page (`<result/>` in a message): counted, consumed.
    func push(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> Bool {
        guard stanza.name == "message", stanza.firstChild(named: "result", namespace: Self.namespace) != nil else { return false }
        context.count(1, &s)
        return true
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
