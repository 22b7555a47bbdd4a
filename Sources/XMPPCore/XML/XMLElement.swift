/// An immutable-by-default XML element tree with resolved namespaces, as parsed from a stanza or built
/// to be sent.
///
/// Invariants: `name` is the local name (no prefix); `namespace` is the resolved namespace URI, `""`
/// when the element is in no namespace; `attributes` never contains namespace declarations and keeps
/// document order; `children` keeps document order. Equality is structural (attribute order counts).
public struct XMLElement: Sendable, Equatable {
    /// Local name, e.g. `message`.
    public var name: String
    /// Resolved namespace URI, e.g. `jabber:client`; `""` for no namespace.
    public var namespace: String
    /// Attributes in document order, without `xmlns` declarations.
    public var attributes: [XMLAttribute]
    /// Child elements and text in document order.
    public var children: [XMLNode]

    /// Builds an element from attribute name/value pairs, e.g.
    /// `XMLElement("iq", namespace: XMPPNamespace.client, attributes: ["type": "get", "id": "r1"])`.
    public init(
        _ name: String,
        namespace: String = "",
        attributes: KeyValuePairs<String, String> = [:],
        children: [XMLNode] = []
    ) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes.map { XMLAttribute($0.key, $0.value) }
        self.children = children
    }

    /// Builds an element from an attribute list (useful when attributes are computed).
    public init(_ name: String, namespace: String = "", attributes: [XMLAttribute], children: [XMLNode] = []) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
    }

    /// The value of the attribute with qualified name `name` (e.g. `type`, `xml:lang`), if present.
    public func attribute(_ name: String) -> String? {
        for attribute in attributes where attribute.name == name {
            return attribute.value
        }
        return nil
    }

    /// Sets (or, with `nil`, removes) the attribute `name`, keeping the position of an existing one.
    public mutating func setAttribute(_ name: String, to value: String?) {
        if let index = attributes.firstIndex(where: { $0.name == name }) {
            if let value {
                attributes[index].value = value
            } else {
                attributes.remove(at: index)
            }
        } else if let value {
            attributes.append(XMLAttribute(name, value))
        }
    }

    /// The first child element with local name `name` and, unless `namespace` is nil, that namespace.
    public func firstChild(named name: String, namespace: String? = nil) -> XMLElement? {
        for case .element(let child) in children
        where child.name == name && (namespace == nil || child.namespace == namespace) {
            return child
        }
        return nil
    }

    /// All child elements with local name `name` and, unless `namespace` is nil, that namespace.
    public func children(named name: String, namespace: String? = nil) -> [XMLElement] {
        var found: [XMLElement] = []
        for case .element(let child) in children
        where child.name == name && (namespace == nil || child.namespace == namespace) {
            found.append(child)
        }
        return found
    }

    /// All child elements, in order, without the text between them.
    public var elementChildren: [XMLElement] {
        var found: [XMLElement] = []
        for case .element(let child) in children {
            found.append(child)
        }
        return found
    }

    /// The concatenation of this element's direct text children (not of its descendants).
    public var text: String {
        var result = ""
        for case .text(let text) in children {
            result += text
        }
        return result
    }

    /// Appends a child element.
    public mutating func append(_ child: XMLElement) {
        children.append(.element(child))
    }

    /// Appends character data (it is escaped when serialized).
    public mutating func append(text: String) {
        children.append(.text(text))
    }
}
