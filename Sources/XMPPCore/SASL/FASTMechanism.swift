/// The XEP-0484 (FAST) token mechanisms xmppload speaks: the HT family of
/// draft-schmaus-kitten-sasl-ht with HMAC-SHA-256, without channel binding (`NONE`) or bound to
/// `tls-server-end-point` (`ENDP`) or `tls-exporter` (`EXPR`). `HT-SHA-256-UNIQ` (tls-unique) is not
/// spoken (see `ChannelBindingType`).
public enum FASTMechanism: String, Sendable, Hashable, CaseIterable {
    case htSHA256Expr = "HT-SHA-256-EXPR"
    case htSHA256Endp = "HT-SHA-256-ENDP"
    case htSHA256None = "HT-SHA-256-NONE"

    /// The wire name.
    public var name: String { rawValue }

    /// Parses a wire name (exact, as servers send them).
    public init?(name: String) {
        self.init(rawValue: name.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The channel binding the mechanism's HMAC covers; nil for `NONE`.
    public var channelBinding: ChannelBindingType? {
        switch self {
        case .htSHA256Expr: return .tlsExporter
        case .htSHA256Endp: return .tlsServerEndPoint
        case .htSHA256None: return nil
        }
    }

    /// Strongest first (bound to the connection, to the certificate, unbound).
    public static let preference: [FASTMechanism] = [.htSHA256Expr, .htSHA256Endp, .htSHA256None]

    /// The strongest of `offered` this connection can use: its channel binding must be advertised
    /// (`advertisedTypes`, XEP-0440; nil: not advertised, so only `NONE`) and available
    /// (`channelBinding`). Unknown names (`HT-SHA-256-UNIQ`, …) are skipped.
    public static func strongest(
        offered: [String], channelBinding: ChannelBindingData, advertisedTypes: [String]?
    ) -> FASTMechanism? {
        let names = Set(offered.compactMap(FASTMechanism.init(name:)))
        return preference.first { mechanism in
            guard names.contains(mechanism) else { return false }
            guard let type = mechanism.channelBinding else { return true }
            return channelBinding.data(for: type) != nil && (advertisedTypes ?? []).contains(type.name)
        }
    }
}
