/// A child of an `XMLElement`: a nested element or a run of character data.
///
/// Text is stored unescaped (entities and CDATA already resolved); adjacent text from the parser
/// arrives as one `.text` node.
public enum XMLNode: Sendable, Equatable {
    case element(XMLElement)
    case text(String)
}
