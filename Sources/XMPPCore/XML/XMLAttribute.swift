/// One attribute of an `XMLElement`: its qualified name as written and its unescaped value.
///
/// Namespace declarations (`xmlns`, `xmlns:p`) are never attributes: they are expressed by the
/// element's `namespace`. Prefixed attributes keep their qualified name, e.g. `xml:lang`; only the
/// `xml` prefix is predeclared, so the writer can emit other prefixes only if an ancestor in the
/// final document declares them.
public struct XMLAttribute: Sendable, Hashable {
    /// Qualified name, e.g. `type` or `xml:lang`. Must be a valid XML name (not escaped on output).
    public var name: String
    /// The value as text (entities resolved); the writer escapes it.
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
