extension XMLElement {
    /// Appends this element as UTF-8 XML to `out`.
    ///
    /// `parentNamespace` is the default namespace in scope where the element is written (for a stanza
    /// on a client stream, `jabber:client`); an `xmlns='…'` declaration is written only on elements whose
    /// namespace differs from their parent's. Text and attribute values are escaped (see
    /// `XMLEscaping`); names are written as they are and must be valid XML names. Attribute values use
    /// single quotes; elements without children are written self-closing.
    public func serialize(into out: inout [UInt8], parentNamespace: String) {
        out.append(UInt8(ascii: "<"))
        XMLEscaping.appendRaw(name, to: &out)
        if namespace != parentNamespace {
            XMLEscaping.appendRaw(" xmlns='", to: &out)
            XMLEscaping.appendAttributeValue(namespace, to: &out)
            out.append(UInt8(ascii: "'"))
        }
        for attribute in attributes {
            XMLEscaping.appendAttribute(attribute.name, attribute.value, to: &out)
        }
        if children.isEmpty {
            out.append(UInt8(ascii: "/"))
            out.append(UInt8(ascii: ">"))
            return
        }
        out.append(UInt8(ascii: ">"))
        for child in children {
            switch child {
            case .element(let element):
                element.serialize(into: &out, parentNamespace: namespace)
            case .text(let text):
                XMLEscaping.appendText(text, to: &out)
            }
        }
        out.append(UInt8(ascii: "<"))
        out.append(UInt8(ascii: "/"))
        XMLEscaping.appendRaw(name, to: &out)
        out.append(UInt8(ascii: ">"))
    }

    /// This element as an XML string; see `serialize(into:parentNamespace:)`.
    public func serialized(parentNamespace: String = XMPPNamespace.client) -> String {
        var bytes: [UInt8] = []
        serialize(into: &bytes, parentNamespace: parentNamespace)
        return String(decoding: bytes, as: UTF8.self)
    }
}
