/// A chat message the profile sends, carrying our `MessageStamp`:
/// `<message to=… type=…><body>…</body><stamp …/></message>` in `jabber:client`.
///
/// The hottest stanza of a load run, so it is written straight to bytes (`serialize`) instead of
/// being built as an `XMLElement` first (an element costs five arrays and two strings per message).
/// `element` is the same stanza as a tree, for what needs one: the stream-management resend queue,
/// failure forensics, tests. The two forms are byte-identical on the wire (tested).
public struct StampedMessage: Sendable, Equatable {
    public var to: String
    public var type: String
    public var body: String
    public var stamp: MessageStamp

    public init(to: String, type: String, body: String, stamp: MessageStamp) {
        self.to = to
        self.type = type
        self.body = body
        self.stamp = stamp
    }

    /// The stanza as an element.
    public var element: XMLElement {
        Stanza.message(to: to, type: type, body: body, extra: [stamp.element])
    }

    /// Appends the stanza as XML to `out`, exactly as `element.serialize(into:parentNamespace:)`
    /// would: `parentNamespace` is the default namespace in scope (`jabber:client` on a client
    /// stream, "" inside a BOSH body).
    public func serialize(into out: inout [UInt8], parentNamespace: String) {
        XMLEscaping.appendRaw("<message", to: &out)
        if parentNamespace != XMPPNamespace.client {
            XMLEscaping.appendAttribute("xmlns", XMPPNamespace.client, to: &out)
        }
        XMLEscaping.appendAttribute("to", to, to: &out)
        XMLEscaping.appendAttribute("type", type, to: &out)
        XMLEscaping.appendRaw("><body>", to: &out)
        XMLEscaping.appendText(body, to: &out)
        XMLEscaping.appendRaw("</body>", to: &out)
        stamp.serialize(into: &out)
        XMLEscaping.appendRaw("</message>", to: &out)
    }
}
