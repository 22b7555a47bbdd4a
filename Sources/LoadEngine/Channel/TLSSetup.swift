import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one TLS client context of a run, shared by every session (NIOSSLContext is thread-safe and
/// expensive to build: build it once).
///
/// With `insecure`, certificate verification is off (self-signed lab certificates); otherwise the
/// server's chain is verified against the system trust store and the XMPP domain. When the domain is
/// an IP literal (`--domain 127.0.0.1`), no SNI is sent (RFC 6066 forbids IP literals there) and the
/// certificate is verified against the address the session connected to (NIOSSL checks the peer's
/// IP address when no hostname is given), so such a server needs an IP subjectAltName — or
/// `--insecure` in a lab.
struct TLSSetup: Sendable {
    let context: NIOSSLContext
    /// The name sent as SNI and checked in the certificate: the XMPP domain; nil for an IP literal.
    let serverHostname: String?

    init(domain: String, insecure: Bool) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if insecure { configuration.certificateVerification = .none }
        context = try NIOSSLContext(configuration: configuration)
        serverHostname = Self.isIPLiteral(domain) ? nil : domain
    }

    /// A handler for one connection.
    func makeHandler() throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
    }

    /// True for an IPv4 or IPv6 address literal (brackets allowed around IPv6).
    static func isIPLiteral(_ text: String) -> Bool {
        var host = text
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
