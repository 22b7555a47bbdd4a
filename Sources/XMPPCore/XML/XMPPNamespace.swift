/// Namespace URIs used on XMPP streams, as constants so no code spells them twice.
///
/// The values are the registered URIs (RFC 6120, RFC 6121 and the XEPs named on each); `stamp` is
/// this project's own namespace for the load-test stamp carried in generated messages.
public enum XMPPNamespace {
    /// Default namespace of client-to-server streams (RFC 6120).
    public static let client = "jabber:client"
    /// The stream element and stream-level elements (`stream:features`, `stream:error`).
    public static let streams = "http://etherx.jabber.org/streams"
    /// STARTTLS negotiation (RFC 6120 §5).
    public static let tls = "urn:ietf:params:xml:ns:xmpp-tls"
    /// SASL negotiation (RFC 6120 §6).
    public static let sasl = "urn:ietf:params:xml:ns:xmpp-sasl"
    /// Resource binding (RFC 6120 §7).
    public static let bind = "urn:ietf:params:xml:ns:xmpp-bind"
    /// Legacy session establishment (RFC 3921, still required by some servers).
    public static let session = "urn:ietf:params:xml:ns:xmpp-session"
    /// Roster management (RFC 6121).
    public static let roster = "jabber:iq:roster"
    /// XMPP ping (XEP-0199).
    public static let ping = "urn:xmpp:ping"
    /// Service discovery, info (XEP-0030).
    public static let discoInfo = "http://jabber.org/protocol/disco#info"
    /// Software version (XEP-0092).
    public static let version = "jabber:iq:version"
    /// vCard (XEP-0054).
    public static let vcard = "vcard-temp"
    /// In-band registration (XEP-0077).
    public static let register = "jabber:iq:register"
    /// The stream feature advertising in-band registration (XEP-0077 §8).
    public static let registerFeature = "http://jabber.org/features/iq-register"
    /// Multi-user chat (XEP-0045).
    public static let muc = "http://jabber.org/protocol/muc"
    /// Multi-user chat, user extensions (XEP-0045).
    public static let mucUser = "http://jabber.org/protocol/muc#user"
    public static let mucOwner = "http://jabber.org/protocol/muc#owner"
    public static let dataForms = "jabber:x:data"
    /// Stanza error conditions (RFC 6120 §8.3).
    public static let stanzas = "urn:ietf:params:xml:ns:xmpp-stanzas"
    /// Stream error conditions (RFC 6120 §4.9).
    public static let streamErrors = "urn:ietf:params:xml:ns:xmpp-streams"
    /// Delayed delivery (XEP-0203).
    public static let delay = "urn:xmpp:delay"
    /// The XML namespace bound to the `xml` prefix (`xml:lang`).
    public static let xml = "http://www.w3.org/XML/1998/namespace"
    /// xmppload's message stamp (run id, sender, sequence, send time).
    public static let stamp = "urn:xmppload:stamp:0"
    /// XEP-0198 stream management (acks and resumption).
    public static let streamManagement = "urn:xmpp:sm:3"

    /// Returns the constant equal to `uri` when there is one (a literal, so it holds no heap storage),
    /// otherwise `uri` itself. Used for values kept per session, such as stream headers.
    static func interned(_ uri: String) -> String {
        switch uri {
        case client: client
        case streams: streams
        case tls: tls
        case sasl: sasl
        case bind: bind
        case session: session
        case roster: roster
        case stanzas: stanzas
        case streamErrors: streamErrors
        case xml: xml
        default: uri
        }
    }
}
