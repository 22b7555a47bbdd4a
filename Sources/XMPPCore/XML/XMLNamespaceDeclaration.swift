/// A namespace declaration in scope on a stream: `xmlns='uri'` (prefix `""`) or `xmlns:prefix='uri'`.
public struct XMLNamespaceDeclaration: Sendable, Hashable {
    /// The declared prefix, or `""` for the default namespace.
    public var prefix: String
    /// The namespace URI.
    public var uri: String

    public init(prefix: String, uri: String) {
        self.prefix = prefix
        self.uri = uri
    }
}
