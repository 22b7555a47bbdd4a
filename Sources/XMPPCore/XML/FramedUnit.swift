/// One unit of an XMPP stream as cut out by `XMLStreamFramer`.
///
/// The byte arrays are exact copies of the wire bytes (UTF-8, not yet parsed or validated beyond the
/// framing rules): hand them to `StanzaParser`.
public enum FramedUnit: Sendable, Equatable {
    /// The stream header: the whole `<stream:stream …>` start tag, from `<` to `>` (a preceding
    /// `<?xml …?>` declaration is not included).
    case streamOpen([UInt8])
    /// One complete depth-1 element (a stanza or a stream-level element such as `<stream:features>`),
    /// from its `<` to the `>` of its end tag (or of its self-closing start tag), children included.
    case element([UInt8])
    /// The stream's end tag, `</stream:stream>`.
    case streamClose
}
