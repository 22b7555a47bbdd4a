/// A typed failure while framing or parsing an XMPP stream's XML.
///
/// `kind` is a short, stable identifier meant for metrics and error counters (it never changes once
/// released; new kinds may be added). `description` is for people: it names what went wrong and,
/// for malformed XML, carries libxml2's own message.
///
/// Kinds:
/// - `xml-malformed`: the bytes are not well-formed XML (framer syntax error or libxml2 error).
/// - `xml-too-large`: a stream header or depth-1 element exceeded the configured byte limit.
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
        case restricted(String)
        case unbalanced
        case unexpectedText
        case invalidHeader(String)
        case dataAfterClose
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    /// Not well-formed XML; `detail` says what (for libxml2 failures, its message).
    static func malformed(_ detail: String) -> XMPPStreamError { XMPPStreamError(.malformed(detail)) }
    /// A unit grew beyond `limit` bytes before it was complete.
    static func tooLarge(limit: Int) -> XMPPStreamError { XMPPStreamError(.tooLarge(limit: limit)) }
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
        case .tooLarge: "xml-too-large"
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
        case .tooLarge(let limit): "XML unit larger than the limit of \(limit) bytes"
        case .restricted(let what): "restricted XML on an XMPP stream: \(what)"
        case .unbalanced: "end tag at stream level that does not close the stream"
        case .unexpectedText: "non-whitespace text between top-level stream elements"
        case .invalidHeader(let detail): "invalid stream header: \(detail)"
        case .dataAfterClose: "data after the stream was closed"
        }
    }
}
