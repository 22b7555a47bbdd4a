/// The attributes and namespace declarations of a `<stream:stream>` start tag.
///
/// The namespace declarations are what stanzas on this stream are parsed against
/// (`StanzaParser.parseElement(_:in:)`): for a client stream, the default namespace `jabber:client` and
/// the `stream` prefix bound to `http://etherx.jabber.org/streams`. A value kept per session, so known
/// namespace URIs are stored as literals without heap storage.
public struct StreamHeader: Sendable, Equatable {
    /// Qualified name of the stream element as written, normally `stream:stream`.
    public var qualifiedName: String
    /// The `from` attribute (the server's domain on a server-to-client header).
    public var from: String?
    /// The `to` attribute.
    public var to: String?
    /// The stream id the server assigned.
    public var id: String?
    /// The `version` attribute, `1.0` for RFC 6120 streams.
    public var version: String?
    /// The `xml:lang` attribute.
    public var language: String?
    /// Namespace declarations on the stream element, in document order.
    public var namespaces: [XMLNamespaceDeclaration]

    /// A header for a client-to-server (or test server-to-client) stream: `qualifiedName`
    /// `stream:stream`, declaring `defaultNamespace` and the `stream` prefix.
    public init(
        from: String? = nil,
        to: String? = nil,
        id: String? = nil,
        version: String? = "1.0",
        language: String? = nil,
        defaultNamespace: String = XMPPNamespace.client
    ) {
        self.init(
            qualifiedName: "stream:stream", from: from, to: to, id: id, version: version, language: language,
            namespaces: [
                XMLNamespaceDeclaration(prefix: "", uri: defaultNamespace),
                XMLNamespaceDeclaration(prefix: "stream", uri: XMPPNamespace.streams),
            ])
    }

    /// A header with every field given.
    public init(
        qualifiedName: String,
        from: String?,
        to: String?,
        id: String?,
        version: String?,
        language: String?,
        namespaces: [XMLNamespaceDeclaration]
    ) {
        self.qualifiedName = qualifiedName
        self.from = from
        self.to = to
        self.id = id
        self.version = version
        self.language = language
        self.namespaces = namespaces
    }

    /// The default namespace declared on the stream (`jabber:client` on client streams), `""` if none.
    public var defaultNamespace: String {
        namespace(forPrefix: "") ?? ""
    }

    /// The URI bound to `prefix` (`""` for the default namespace) on the stream element, if declared.
    public func namespace(forPrefix prefix: String) -> String? {
        namespaces.first { $0.prefix == prefix }?.uri
    }

    /// Appends the header as it is sent: optionally `<?xml version='1.0'?>`, then the start tag with
    /// escaped attribute values. The stream stays open, so there is no end tag.
    public func serialize(into out: inout [UInt8], withDeclaration: Bool = true) {
        if withDeclaration {
            XMLEscaping.appendRaw("<?xml version='1.0'?>", to: &out)
        }
        out.append(UInt8(ascii: "<"))
        XMLEscaping.appendRaw(qualifiedName, to: &out)
        for (name, value) in [("from", from), ("to", to), ("id", id), ("version", version), ("xml:lang", language)] {
            if let value {
                appendAttribute(name, value, to: &out)
            }
        }
        for declaration in namespaces {
            appendAttribute(declaration.prefix.isEmpty ? "xmlns" : "xmlns:" + declaration.prefix, declaration.uri, to: &out)
        }
        out.append(UInt8(ascii: ">"))
    }

    /// The stream's end tag, e.g. `</stream:stream>`.
    public var closingTag: [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "<"), UInt8(ascii: "/")]
        XMLEscaping.appendRaw(qualifiedName, to: &out)
        out.append(UInt8(ascii: ">"))
        return out
    }

    private func appendAttribute(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: " "))
        XMLEscaping.appendRaw(name, to: &out)
        out.append(UInt8(ascii: "="))
        out.append(UInt8(ascii: "'"))
        XMLEscaping.appendAttributeValue(value, to: &out)
        out.append(UInt8(ascii: "'"))
    }
}
