/// The channel-binding data of one TLS connection, per type, as the TLS layer computed it after the
/// handshake (LoadEngine's `ChannelBindingReader`). Empty (`.none`) on a plaintext connection, or
/// when the TLS layer could not compute any type.
///
/// Secret-ish (tls-exporter is derived from the connection's keys): `description` never shows the bytes.
public struct ChannelBindingData: Sendable, Equatable, CustomStringConvertible {
    /// RFC 5929 `tls-server-end-point`: the certificate hash (20 to 64 bytes).
    public var tlsServerEndPoint: [UInt8]?
    /// RFC 9266 `tls-exporter`: 32 bytes (TLS 1.3 only).
    public var tlsExporter: [UInt8]?

    /// No channel binding on this connection.
    public static let none = ChannelBindingData()

    public init(tlsServerEndPoint: [UInt8]? = nil, tlsExporter: [UInt8]? = nil) {
        self.tlsServerEndPoint = tlsServerEndPoint
        self.tlsExporter = tlsExporter
    }

    /// The data for `type`, if the TLS layer computed it (never empty).
    public func data(for type: ChannelBindingType) -> [UInt8]? {
        let data: [UInt8]?
        switch type {
        case .tlsServerEndPoint: data = tlsServerEndPoint
        case .tlsExporter: data = tlsExporter
        }
        guard let data, !data.isEmpty else { return nil }
        return data
    }

    /// The types this connection can bind to, strongest first.
    public var available: [ChannelBindingType] {
        ChannelBindingType.preference.filter { data(for: $0) != nil }
    }

    /// Whether any type is available (the client "supports channel binding" on this connection).
    public var isEmpty: Bool { available.isEmpty }

    /// "tls-exporter, tls-server-end-point" or "none": the types, never the bytes.
    public var description: String {
        available.isEmpty ? "ChannelBindingData(none)" : "ChannelBindingData(\(available.map(\.name).joined(separator: ", ")))"
    }
}
