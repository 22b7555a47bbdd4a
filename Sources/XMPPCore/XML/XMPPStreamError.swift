/// A typed failure while framing or parsing an XMPP stream's XML.
///
/// `kind` is a short, stable identifier meant for metrics and error counters (it never changes once
/// released; new kinds may be added). `description` is for people: it names what went wrong and,
/// for malformed XML, carries libxml2's own message.
///
/// Kinds:
/// - `xml-malformed`: the bytes are not well-formed XML (framer syntax error or libxml2 error).
/// - `xml-limit-element-size`: a stream header or depth-1 element exceeded `XMLLimits.maxElementBytes`.
/// - `xml-limit-buffer`: more unreturned bytes than `XMLLimits.maxBufferedBytes`.
/// - `xml-limit-depth`: nesting deeper than `XMLLimits.maxDepth`.
/// - `xml-limit-attributes`: more attributes on one start tag than `XMLLimits.maxAttributesPerElement`.
/// - `xml-limit-namespaces`: more namespace declarations on the header than `XMLLimits.maxHeaderNamespaces`.
/// - `xml-restricted`: XML that RFC 6120 §11.1 forbids on a stream: comments, processing instructions
///   (other than the initial XML declaration), DTDs, entity references to non-predefined entities.
/// - `xml-unbalanced`: an end tag at stream level that does not close the stream.
/// - `xml-unexpected-text`: non-whitespace character data between depth-1 elements.
/// - `stream-header-invalid`: the stream did not start with a valid `<stream:stream>` header.
/// - `stream-closed`: data other than whitespace after `</stream:stream>`.
public struct XMPPStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case malformed(String)
        case tooLarge(limit: Int)
        case limit(Limit, limit: Int)
        case restricted(String)
        case unbalanced
        case unexpectedText
        case invalidHeader(String)
        case dataAfterClose
    }

    /// Which `XMLLimits` value was exceeded (one byte, so the error stays small inside the framer).
    private enum Limit: UInt8, Sendable, Equatable {
        case buffer, depth, attributes, namespaces

        var kind: String {
            switch self {
            case .buffer: "xml-limit-buffer"
            case .depth: "xml-limit-depth"
            case .attributes: "xml-limit-attributes"
            case .namespaces: "xml-limit-namespaces"
            }
        }

        var what: String {
            switch self {
            case .buffer: "bytes buffered for an incomplete element"
            case .depth: "element nesting depth"
            case .attributes: "attributes on one start tag"
            case .namespaces: "namespace declarations on the stream header"
            }
        }
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    /// Not well-formed XML; `detail` says what (for libxml2 failures, its message).
    static func malformed(_ detail: String) -> XMPPStreamError { XMPPStreamError(.malformed(detail)) }
    /// A unit grew beyond `limit` bytes before it was complete.
    static func tooLarge(limit: Int) -> XMPPStreamError { XMPPStreamError(.tooLarge(limit: limit)) }
    /// More buffered bytes than `limit`.
    static func bufferLimit(_ limit: Int) -> XMPPStreamError {
        XMPPStreamError(.limit(.buffer, limit: limit))
    }
    /// Nesting deeper than `limit`.
    static func depthLimit(_ limit: Int) -> XMPPStreamError {
        XMPPStreamError(.limit(.depth, limit: limit))
    }
    /// More attributes on one start tag than `limit`.
    static func attributeLimit(_ limit: Int) -> XMPPStreamError {
        XMPPStreamError(.limit(.attributes, limit: limit))
    }
    /// More namespace declarations on the stream header than `limit`.
    static func namespaceLimit(_ limit: Int) -> XMPPStreamError {
        XMPPStreamError(.limit(.namespaces, limit: limit))
    }
    /// XML that XMPP streams must not carry (comment, PI, DTD, custom entity).
    static func restricted(_ what: String) -> XMPPStreamError { XMPPStreamError(.restricted(what)) }
    /// An end tag at stream level that is not the stream's own close tag.
    static let unbalanced = XMPPStreamError(.unbalanced)
    /// Non-whitespace text between depth-1 elements.
    static let unexpectedText = XMPPStreamError(.unexpectedText)
    /// The stream header is missing or invalid.
    static func invalidHeader(_ detail: String) -> XMPPStreamError { XMPPStreamError(.invalidHeader(detail)) }
    /// Non-whitespace bytes after the stream was closed.
    static let dataAfterClose = XMPPStreamError(.dataAfterClose)

    /// Stable identifier for metrics, e.g. `"xml-malformed"`.
    public var kind: String {
        switch reason {
        case .malformed: "xml-malformed"
        case .tooLarge: "xml-limit-element-size"
        case .limit(let which, _): which.kind
        case .restricted: "xml-restricted"
        case .unbalanced: "xml-unbalanced"
        case .unexpectedText: "xml-unexpected-text"
        case .invalidHeader: "stream-header-invalid"
        case .dataAfterClose: "stream-closed"
        }
    }

    public var description: String {
        switch reason {
        case .malformed(let detail): "malformed XML: \(detail)"
        case .tooLarge(let limit): "XML unit larger than the limit of \(limit) bytes (see docs/HARDENING.md)"
        case .limit(let which, let limit): "\(which.what) beyond the limit of \(limit) (see docs/HARDENING.md)"
        case .restricted(let what): "restricted XML on an XMPP stream: \(what)"
        case .unbalanced: "end tag at stream level that does not close the stream"
        case .unexpectedText: "non-whitespace text between top-level stream elements"
        case .invalidHeader(let detail): "invalid stream header: \(detail)"
        case .dataAfterClose: "data after the stream was closed"
        }
    }
}
