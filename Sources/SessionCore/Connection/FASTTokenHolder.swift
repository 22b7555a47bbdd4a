// The FAST token a virtual user holds between its connections, in a box only its holders pay for.
import XMPPCore

/// The XEP-0484 FAST token one virtual user got at a login, for its next connections (reconnects,
/// churn, a resumption through SASL2): replaced when the server rotates it, dropped when the server
/// refuses it. A box (one pointer in `LoginFeature`), made only once a server issued a token, so a
/// session of a server without FAST pays nothing.
///
/// A secret like the password: in memory only, never recorded, logged or written to results or
/// forensics (`FASTToken.description` hides it).
final class FASTTokenHolder {
    var token: FASTToken

    init(token: FASTToken) { self.token = token }
}
