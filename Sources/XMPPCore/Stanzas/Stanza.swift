/// Builders for the stanzas and nonzas a client sends.
///
/// Every builder returns an `XMLElement`; escaping happens once, in the writer, so no caller ever
/// builds XML by string interpolation. Stanzas (`iq`, `message`, `presence`) are in the stream's
/// default namespace `jabber:client`, which the writer omits at depth 1.
public enum Stanza {
    /// The opening stream header a client sends (RFC 6120 §4.7), with an XML declaration.
    public static func streamHeader(to domain: String) -> [UInt8] {
        var bytes: [UInt8] = []
        appendStreamHeader(to: domain, into: &bytes)
        return bytes
    }

    /// Appends `streamHeader(to:)` to `out`.
    public static func appendStreamHeader(to domain: String, into out: inout [UInt8]) {
        out += streamHeaderStart
        XMLEscaping.appendAttributeValue(domain, to: &out)
        out.append(contentsOf: "'>".utf8)
    }

    /// The opening stream header with a `from` (RFC 6120 §4.7.1: the user's bare JID, on a
    /// TLS-protected stream — `LoginMachine.streamHeaderFrom`); without `from` when it is nil.
    public static func streamHeader(to domain: String, from: String?) -> [UInt8] {
        var bytes: [UInt8] = []
        appendStreamHeader(to: domain, from: from, into: &bytes)
        return bytes
    }

    /// Appends `streamHeader(to:from:)` to `out`.
    public static func appendStreamHeader(to domain: String, from: String?, into out: inout [UInt8]) {
        guard let from else { return appendStreamHeader(to: domain, into: &out) }
        out += streamHeaderStart
        XMLEscaping.appendAttributeValue(domain, to: &out)
        out.append(contentsOf: "' from='".utf8)
        XMLEscaping.appendAttributeValue(from, to: &out)
        out.append(contentsOf: "'>".utf8)
    }

    private static let streamHeaderStart = Array(
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='".utf8)

    /// The closing tag of the stream.
    public static let streamClose: [UInt8] = Array("</stream:stream>".utf8)

    /// `<iq type=… id=… [to=…]>child</iq>`.
    public static func iq(type: String, id: String, to: String? = nil, child: XMLElement? = nil) -> XMLElement {
        var attributes = [XMLAttribute("type", type), XMLAttribute("id", id)]
        if let to { attributes.append(XMLAttribute("to", to)) }
        return XMLElement(
            "iq", namespace: XMPPNamespace.client, attributes: attributes,
            children: child.map { [.element($0)] } ?? [])
    }

    /// An iq `result` answering `request` (same id, addressed to its sender).
    public static func iqResult(answering request: XMLElement) -> XMLElement {
        iq(type: "result", id: request.attribute("id") ?? "", to: request.attribute("from"))
    }

    /// An iq `error` answering `request` with a defined stanza error condition (RFC 6120 §8.3.3).
    public static func iqError(
        answering request: XMLElement, condition: String = "service-unavailable",
        type errorType: String = "cancel"
    ) -> XMLElement {
        let error = XMLElement(
            "error", namespace: XMPPNamespace.client,
            attributes: [XMLAttribute("type", errorType)],
            children: [.element(XMLElement(condition, namespace: XMPPNamespace.stanzas))])
        return iq(type: "error", id: request.attribute("id") ?? "", to: request.attribute("from"), child: error)
    }

    /// `<presence [to] [type]>` with optional show, status and priority children.
    public static func presence(
        to: String? = nil, type: String? = nil, show: String? = nil,
        status: String? = nil, priority: Int? = nil,
        extra: [XMLElement] = []
    ) -> XMLElement {
        var attributes: [XMLAttribute] = []
        if let to { attributes.append(XMLAttribute("to", to)) }
        if let type { attributes.append(XMLAttribute("type", type)) }
        var children: [XMLNode] = []
        if let show { children.append(.element(textElement("show", show))) }
        if let status { children.append(.element(textElement("status", status))) }
        if let priority { children.append(.element(textElement("priority", String(priority)))) }
        children.append(contentsOf: extra.map { .element($0) })
        return XMLElement("presence", namespace: XMPPNamespace.client, attributes: attributes, children: children)
    }

    /// `<message to=… type=… [id]><body>…</body>extra</message>`.
    public static func message(
        to: String, type: String = "chat", id: String? = nil, body: String?,
        extra: [XMLElement] = []
    ) -> XMLElement {
        var attributes = [XMLAttribute("to", to), XMLAttribute("type", type)]
        if let id { attributes.append(XMLAttribute("id", id)) }
        var children: [XMLNode] = []
        if let body { children.append(.element(textElement("body", body))) }
        children.append(contentsOf: extra.map { .element($0) })
        return XMLElement("message", namespace: XMPPNamespace.client, attributes: attributes, children: children)
    }

    /// An element in `jabber:client` (or `namespace`) whose only child is `text`.
    public static func textElement(_ name: String, _ text: String, namespace: String = XMPPNamespace.client) -> XMLElement {
        XMLElement(name, namespace: namespace, children: [.text(text)])
    }

    /// The defined condition of an `<error>` child (stanza error) or of a `<stream:error>`/`<failure>`:
    /// the name of the first child element in `conditionNamespace`, or `undefined-condition`.
    public static func errorCondition(of element: XMLElement, conditionNamespace: String) -> String {
        let container =
            element.name == "error" || element.name == "failure"
            ? element
            : (element.firstChild(named: "error", namespace: nil) ?? element)
        for child in container.elementChildren where child.namespace == conditionNamespace && child.name != "text" {
            // Only defined conditions become labels (bounded cardinality); others are undefined.
            guard let defined = DefinedConditions.conditions(in: conditionNamespace) else { return child.name }
            return defined.contains(child.name) ? child.name : "undefined-condition"
        }
        return "undefined-condition"
    }
}
