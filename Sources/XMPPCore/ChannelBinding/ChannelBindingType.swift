/// A TLS channel-binding type (RFC 5056) that SCRAM `-PLUS` and FAST `HT-*-ENDP/EXPR` can bind to,
/// by its IANA "channel-binding unique prefix" (the name XEP-0440 advertises and the SCRAM gs2
/// header carries as `p=<name>`).
///
/// `tls-unique` (RFC 5929 §3) is not supported: it is undefined for TLS 1.3 and NIOSSL does not
/// expose the TLS 1.2 Finished message it is made of.
public enum ChannelBindingType: String, Sendable, Hashable, CaseIterable, Comparable {
    /// RFC 9266: 32 bytes of TLS 1.3 keying material exported with the label
    /// "EXPORTER-Channel-Binding" and an empty context. Binds to this one TLS connection.
    case tlsExporter = "tls-exporter"
    /// RFC 5929 §4: a hash of the server's certificate. Binds to the server's certificate only (a
    /// MITM holding the server's key is not detected), but needs nothing from the TLS stack.
    case tlsServerEndPoint = "tls-server-end-point"

    /// The wire name, as in `p=tls-exporter`.
    public var name: String { rawValue }

    /// Strongest first: `tls-exporter` binds the connection, `tls-server-end-point` only the certificate.
    public static let preference: [ChannelBindingType] = [.tlsExporter, .tlsServerEndPoint]

    /// Ordered by strength, strongest smallest (`preference` order).
    public static func < (lhs: ChannelBindingType, rhs: ChannelBindingType) -> Bool {
        preference.firstIndex(of: lhs)! < preference.firstIndex(of: rhs)!
    }
}
