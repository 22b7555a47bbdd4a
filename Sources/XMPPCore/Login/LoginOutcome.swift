/// How a finished login went: set by `LoginMachine` when it reports `.loggedIn` or `.resumed`
/// (`LoginMachine.outcome`), a plain value for the caller to count (`login_paths`) and act on
/// (store a new FAST token, drop a rejected one, take Bind2's stream-management grant).
///
/// `roundTrips` counts the request/answer exchanges the client waited for from the TCP connection to
/// logged in: each stream header (→ features), `<starttls/>` (→ proceed), the TLS handshake (one,
/// whatever TLS did inside it: the machine does not see TLS 1.2's second flight), every SASL message
/// that the server answers (`<auth/>`/`<authenticate/>`, `<response/>`), each iq (register, bind,
/// session) and `<resume/>`. The TCP connect is not counted, nor anything sent after logging in (a
/// classic login's XEP-0198 `<enable/>` costs one more; Bind2 carries it). A failed FAST attempt that
/// fell back to the password on the same stream counts its exchange too.
public struct LoginOutcome: Sendable, Equatable {
    /// Which path the login took.
    public var path: LoginPath
    /// Request/answer exchanges waited for (see above).
    public var roundTrips: Int
    /// The bound full JID; nil for a resumption (the stream's JID is the one bound before).
    public var jid: String?
    /// The SASL mechanism that authenticated (`SCRAM-SHA-256-PLUS`, `HT-SHA-256-NONE`, `PLAIN`, …).
    public var mechanism: String
    /// The channel binding the authentication was bound to (SCRAM -PLUS, HT-*-ENDP/EXPR); nil for none.
    public var channelBinding: ChannelBindingType?
    /// XEP-0474 for a SCRAM login: whether the server sent a downgrade-protection hash (it matched,
    /// or the login would have failed); nil for other mechanisms.
    public var downgradeProtection: SCRAMDowngradeCheck?
    /// Bind2's answer to an inline XEP-0198 `<enable/>`; nil when none was asked for.
    public var streamManagement: InlineStreamManagement?
    /// The `h` of the server's `<resumed/>` (our stanzas it handled), for a resumption.
    public var resumedHandled: UInt32?
    /// The server refused a resumption (`<failed/>`) before this login bound a fresh session.
    public var resumeFailed: Bool
    /// Message carbons (XEP-0280) were enabled inline with Bind2 (it has no answer: asked and offered).
    public var carbonsEnabled: Bool
    /// A FAST token the server issued in this login (asked for, or rotated): it replaces the old one.
    public var newFASTToken: FASTToken?
    /// The server refused the FAST token given (its SASL condition): the login fell back to the
    /// password on the same stream; drop the token and count the fallback.
    public var fastTokenRejected: String?

    public init(
        path: LoginPath, roundTrips: Int, jid: String?, mechanism: String, channelBinding: ChannelBindingType? = nil,
        downgradeProtection: SCRAMDowngradeCheck? = nil, streamManagement: InlineStreamManagement? = nil,
        resumedHandled: UInt32? = nil, resumeFailed: Bool = false, carbonsEnabled: Bool = false, newFASTToken: FASTToken? = nil,
        fastTokenRejected: String? = nil
    ) {
        self.path = path
        self.roundTrips = roundTrips
        self.jid = jid
        self.mechanism = mechanism
        self.channelBinding = channelBinding
        self.downgradeProtection = downgradeProtection
        self.streamManagement = streamManagement
        self.resumedHandled = resumedHandled
        self.resumeFailed = resumeFailed
        self.carbonsEnabled = carbonsEnabled
        self.newFASTToken = newFASTToken
        self.fastTokenRejected = fastTokenRejected
    }
}
