import SessionCore
import XMPPCore

/// BOSH `<body/>` wrappers (XEP-0124, XEP-0206): the request bodies a client sends and what it reads
/// from a response body. Pure functions of their arguments; no I/O.
///
/// Requests carry the next `rid` (strictly increasing, one per request) and, after session
/// creation, the `sid`. Stanzas go inside the body already serialized, each declaring `jabber:client`
/// (the body's default namespace is `http://jabber.org/protocol/httpbind`).
enum BOSHBody {
    static let namespace = "http://jabber.org/protocol/httpbind"
    static let xbosh = "urn:xmpp:xbosh"

    /// The session creation request (XEP-0206 §5): `to`, `wait` seconds, `hold` 1, version 1.11,
    /// XMPP version 1.0.
    static func creation(rid: UInt64, to domain: String, wait: Int) -> [UInt8] {
        wrap(
            attributes: [
                XMLAttribute("content", "text/xml; charset=utf-8"), XMLAttribute("hold", "1"),
                XMLAttribute("rid", String(rid)), XMLAttribute("to", domain), XMLAttribute("ver", "1.11"),
                XMLAttribute("wait", String(wait)), XMLAttribute("xml:lang", "en"),
                XMLAttribute("xmpp:version", "1.0"), XMLAttribute("xmlns:xmpp", xbosh),
            ], payload: [])
    }

    /// What a request after creation asks for besides carrying stanzas.
    enum Kind: Equatable {
        /// Stanzas (or nothing: an empty request is the long poll).
        case plain
        /// The stream restart after SASL success (XEP-0206 §5): `xmpp:restart='true'`, `to`.
        case restart(domain: String)
        /// The end of the session: `type='terminate'`.
        case terminate
    }

    /// A request of session `sid` carrying `payload` (serialized stanzas, possibly none).
    static func request(rid: UInt64, sid: String, kind: Kind, payload: [UInt8]) -> [UInt8] {
        var attributes = [XMLAttribute("rid", String(rid)), XMLAttribute("sid", sid)]
        switch kind {
        case .plain:
            break
        case .restart(let domain):
            attributes += [
                XMLAttribute("to", domain), XMLAttribute("xml:lang", "en"), XMLAttribute("xmpp:restart", "true"),
                XMLAttribute("xmlns:xmpp", xbosh),
            ]
        case .terminate:
            attributes.append(XMLAttribute("type", "terminate"))
        }
        return wrap(attributes: attributes, payload: payload)
    }

    /// `<body ATTRS xmlns='…httpbind'>PAYLOAD</body>`, attribute values escaped by the element writer.
    private static func wrap(attributes: [XMLAttribute], payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(200 + payload.count)
        XMLElement("body", namespace: namespace, attributes: attributes).serialize(into: &bytes, parentNamespace: "")
        // The writer closes an empty element with "/>": open it to carry the payload.
        if bytes.count >= 2, bytes[bytes.count - 2] == UInt8(ascii: "/") {
            bytes.removeLast(2)
            bytes.append(UInt8(ascii: ">"))
        }
        bytes += payload
        bytes += Array("</body>".utf8)
        return bytes
    }

    /// What one response body says.
    struct Response: Equatable {
        var sid: String?
        /// The server's `wait` (seconds), `requests` (most simultaneous requests) and `hold`.
        var wait: Int?
        var requests: Int?
        /// `type='terminate'`, with its `condition` (nil: a normal end).
        var terminated: Bool
        var condition: String?
        /// The stanzas and other elements inside, in order.
        var elements: [XMLElement]
    }

    /// Reads a response body (parsed by the loop's parser); not a `<body/>` in the httpbind namespace
    /// is `web-protocol-error`.
    static func response(_ bytes: UnsafeRawBufferPointer, parser: StanzaParser) throws -> Response {
        let body = try parser.parseElement(bytes, in: scope)
        guard body.name == "body", body.namespace == namespace else {
            throw SessionError.connection(.webProtocol)
        }
        var elements: [XMLElement] = []
        for case .element(let child) in body.children { elements.append(child) }
        return Response(
            sid: body.attribute("sid"), wait: body.attribute("wait").flatMap(Int.init),
            requests: body.attribute("requests").flatMap(Int.init), terminated: body.attribute("type") == "terminate",
            condition: body.attribute("condition"), elements: elements)
    }

    /// What a body is parsed in: a client stream's namespaces (stanzas that do not declare
    /// `jabber:client` inherit the body's namespace, as XML says).
    private static let scope = StreamHeader()
}
