/// How one SCRAM exchange treats channel binding: the gs2 header's flag (RFC 5802 §5.1, §7) and,
/// when bound, the data that `c=` carries after the header.
///
/// - `unsupported` (`n`): the client does not bind — it has no channel-binding data, or the server
///   offers `-PLUS` but no type both sides know (XEP-0474 rule 6), or a non-PLUS mechanism was forced
///   while `-PLUS` is offered (sending `y` then would make the server fail the login).
/// - `notOfferedByServer` (`y`): the client could bind but the server offered no `-PLUS`
///   mechanism; a server that does support channel binding fails such a login (RFC 5802's downgrade
///   protection).
/// - `bound` (`p=<type>`): a `-PLUS` mechanism bound to this connection's data.
public enum SCRAMChannelBinding: Sendable, Equatable, CustomStringConvertible {
    case unsupported
    case notOfferedByServer
    case bound(ChannelBindingType, [UInt8])

    /// The gs2-cbind-flag: `n`, `y` or `p=<type>`.
    var flag: String {
        switch self {
        case .unsupported: return "n"
        case .notOfferedByServer: return "y"
        case .bound(let type, _): return "p=\(type.name)"
        }
    }

    /// The bound type, if any.
    public var type: ChannelBindingType? {
        if case .bound(let type, _) = self { return type }
        return nil
    }

    /// The flag, never the data.
    public var description: String { flag }
}
