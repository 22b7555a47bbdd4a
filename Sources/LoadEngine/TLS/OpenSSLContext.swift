// The one OpenSSL client context (SSL_CTX) of a run: protocol versions, trust store, verification
// mode, ALPN and buffer release, built once and shared by every connection's OpenSSLClientHandler.

import CLibSSL

/// A TLS client context over OpenSSL's libssl, shared by every connection of a run.
///
/// TLS 1.2 and 1.3 only. With `verifies`, the server's chain is verified against the system trust
/// store (OpenSSL's default paths: Debian's /etc/ssl/certs) and each connection adds its host name or
/// IP address to check; without it (`--insecure`) no verification at all. `SSL_MODE_RELEASE_BUFFERS`
/// is on: an idle connection holds no TLS read or write buffer (OpenSSL frees them once empty).
/// Thread-safe for this use (OpenSSL's SSL_CTX is shared read-only once built; `SSL_new` from any
/// thread). `alpn` (e.g. `["http/1.1"]` for wss and https) is offered by every connection.
public final class OpenSSLContext: @unchecked Sendable {
    /// The SSL_CTX; owned, freed with the context.
    let pointer: OpaquePointer
    /// Whether certificates and names are verified (not `--insecure`).
    public let verifies: Bool
    /// ALPN protocol names offered, in preference order (empty: no ALPN extension).
    public let alpn: [String]

    /// Builds the context; throws `OpenSSLError` when OpenSSL cannot (no trust store, bad ALPN name).
    /// `trustedCertificates` (a PEM file) adds roots to the system store's (a lab CA).
    public init(verifies: Bool, alpn: [String] = [], trustedCertificates: String? = nil) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw OpenSSLError(kind: .setup, reason: "SSL_CTX_new: " + OpenSSLError.drainQueue())
        }
        pointer = context
        self.verifies = verifies
        self.alpn = alpn
        guard xl_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw OpenSSLError(kind: .setup, reason: "cannot set TLS 1.2 as the minimum version")
        }
        _ = xl_SSL_CTX_set_release_buffers(context)
        if verifies {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw OpenSSLError(kind: .setup, reason: "no system trust store: " + OpenSSLError.drainQueue())
            }
            if let trustedCertificates {
                guard SSL_CTX_load_verify_locations(context, trustedCertificates, nil) == 1 else {
                    throw OpenSSLError(
                        kind: .setup, reason: "cannot load \(trustedCertificates): " + OpenSSLError.drainQueue())
                }
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        if !alpn.isEmpty {
            var wire: [UInt8] = []
            for name in alpn {
                let bytes = Array(name.utf8)
                guard (1...255).contains(bytes.count) else {
                    throw OpenSSLError(kind: .setup, reason: "ALPN name '\(name)' must be 1 to 255 bytes")
                }
                wire.append(UInt8(bytes.count))
                wire.append(contentsOf: bytes)
            }
            // Returns 0 on success (unlike most of OpenSSL).
            guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else {
                throw OpenSSLError(kind: .setup, reason: "SSL_CTX_set_alpn_protos failed")
            }
        }
    }

    /// Whether the release-buffers mode is set (for tests: an idle connection keeps no buffers).
    public var releasesBuffers: Bool { xl_SSL_CTX_get_mode(pointer) & xl_SSL_MODE_RELEASE_BUFFERS() != 0 }

    deinit { SSL_CTX_free(pointer) }
}
