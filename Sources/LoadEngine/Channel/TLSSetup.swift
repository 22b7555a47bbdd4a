import NIOCore
import SessionCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one TLS client context of a run, shared by every session (an `OpenSSLContext`: OpenSSL's
/// SSL_CTX is shared read-only once built and expensive to build, so it is built once).
///
/// With `insecure`, certificate verification is off (self-signed lab certificates); otherwise the
/// server's chain is verified against the system trust store and the XMPP domain (over `wss://` and
/// `https://`, the URL's host: `makeHandlers(httpHost:)`). When the domain is an IP literal
/// (`--domain 127.0.0.1`), no SNI is sent (RFC 6066 forbids IP literals there) and the certificate is
/// verified against the address the session connected to, so such a server needs an IP
/// subjectAltName — or `--insecure` in a lab.
///
/// A verification failure says why: `OpenSSLClientHandler` fails the handshake with an
/// `OpenSSLError` carrying the problem (expired, not yet valid, self-signed, untrusted, host name
/// mismatch), counted as `tls-certificate-<problem>` (`ConnectionFailure.tlsCertificate`).
struct TLSSetup: Sendable {
    let context: OpenSSLContext
    /// The name sent as SNI and checked in the certificate: the XMPP domain; nil for an IP literal.
    let serverHostname: String?
    /// Whether certificates are verified (not `--insecure`).
    var verifies: Bool { context.verifies }

    init(domain: String, insecure: Bool) throws {
        try self.init(domain: domain, context: OpenSSLContext(verifies: !insecure))
    }

    /// A setup over a context built elsewhere (the `--insecure` probe's observing one).
    init(domain: String, context: OpenSSLContext) {
        self.context = context
        serverHostname = Self.isIPLiteral(domain) ? nil : domain
    }

    /// The handlers for one connection, in pipeline order: the TLS client.
    func makeHandlers() -> [any ChannelHandler] {
        [OpenSSLClientHandler(context: context, serverHostname: serverHostname)]
    }

    /// The handlers for one connection to a `wss://` or `https://` endpoint whose URL names `host`:
    /// as `makeHandlers()`, but the name sent as SNI and checked in the certificate is that host, not
    /// the XMPP domain (RFC 2818 §3.1: an HTTPS server's certificate is for the host the client asked
    /// for); an IP-literal host sends no SNI and is checked against the certificate's IP addresses.
    func makeHandlers(httpHost host: String) -> [any ChannelHandler] {
        [OpenSSLClientHandler(context: context, serverHostname: Self.isIPLiteral(host) ? nil : host)]
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
