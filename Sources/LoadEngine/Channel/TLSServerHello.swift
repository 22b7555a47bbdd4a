import NIOSSL

/// Reads the negotiated cipher suite from the first bytes the server sent after TLS started (its
/// ServerHello, as our byte counter saw it on the wire): NIOSSL reports the TLS version but not the
/// cipher, and the ServerHello carries it in the clear.
package enum TLSServerHello {
    /// The cipher suite's IANA name (`0xXXXX` when not in the table), or nil when `bytes` does not
    /// start with a complete ServerHello.
    package static func cipherSuite(in bytes: [UInt8]) -> String? {
        // TLS record: type 22 (handshake), version (2), length (2); handshake: type 2 (ServerHello),
        // length (3), legacy version (2), random (32), session id (1 + n), cipher suite (2).
        guard bytes.count >= 5 + 4 + 2 + 32 + 1, bytes[0] == 22, bytes[5] == 2 else { return nil }
        let sessionIDLength = Int(bytes[5 + 4 + 2 + 32])
        let at = 5 + 4 + 2 + 32 + 1 + sessionIDLength
        guard bytes.count >= at + 2 else { return nil }
        let code = UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
        return names[code] ?? "0x" + String(code, radix: 16, uppercase: true)
    }

    package static let names: [UInt16: String] = [
        0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384", 0x1303: "TLS_CHACHA20_POLY1305_SHA256",
        0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xC02C: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xC02F: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xCCA8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xCCA9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        0x009C: "TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009D: "TLS_RSA_WITH_AES_256_GCM_SHA384",
    ]

    package static func name(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: return "TLSv1"
        case .tlsv11: return "TLSv1.1"
        case .tlsv12: return "TLSv1.2"
        case .tlsv13: return "TLSv1.3"
        }
    }
}
