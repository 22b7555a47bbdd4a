/// Bounds on the work and memory one session's inbound XML may cost, whatever the server sends.
///
/// Enforced by `XMLStreamFramer` (per session: element size, buffered bytes, depth, attributes per
/// start tag) and `StanzaParser` (namespace declarations on the stream header). A session that hits a
/// limit ends with a typed `XMPPStreamError` of kind `xml-limit-<what>`; other sessions are unaffected.
/// Defaults are documented in docs/HARDENING.md; every value must be positive.
public struct XMLLimits: Sendable, Equatable {
    /// Largest stream header or depth-1 element accepted, in bytes (`xml-limit-element-size`).
    public var maxElementBytes: Int
    /// Most bytes a session's framer may hold that it has not yet returned as units, in bytes
    /// (`xml-limit-buffer`). At least `maxElementBytes`.
    public var maxBufferedBytes: Int
    /// Deepest nesting inside a depth-1 element; the element itself is depth 1 (`xml-limit-depth`).
    public var maxDepth: Int
    /// Most attributes (namespace declarations included) on one start tag (`xml-limit-attributes`).
    public var maxAttributesPerElement: Int
    /// Most namespace declarations on the stream header (`xml-limit-namespaces`).
    public var maxHeaderNamespaces: Int

    /// 256 KiB elements, 512 KiB buffered, depth 64, 64 attributes per tag, 16 header namespaces.
    public static let `default` = XMLLimits()

    public init(
        maxElementBytes: Int = 256 * 1024, maxBufferedBytes: Int? = nil, maxDepth: Int = 64,
        maxAttributesPerElement: Int = 64, maxHeaderNamespaces: Int = 16
    ) {
        self.maxElementBytes = maxElementBytes
        self.maxBufferedBytes = maxBufferedBytes ?? max(512 * 1024, maxElementBytes)
        self.maxDepth = maxDepth
        self.maxAttributesPerElement = maxAttributesPerElement
        self.maxHeaderNamespaces = maxHeaderNamespaces
    }

    /// Every problem with these values, for a usage error (empty when valid).
    public var problems: [String] {
        var problems: [String] = []
        if maxElementBytes < 64 { problems.append("the element size limit must be at least 64 bytes") }
        if maxBufferedBytes < maxElementBytes { problems.append("the buffer limit must be at least the element size limit") }
        if maxDepth < 2 { problems.append("the depth limit must be at least 2") }
        if maxAttributesPerElement < 8 { problems.append("the attribute limit must be at least 8") }
        if maxHeaderNamespaces < 2 { problems.append("the header namespace limit must be at least 2") }
        return problems
    }
}
