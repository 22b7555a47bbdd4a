import NIOSSL

/// The one TLS client context of a run, shared by every session (NIOSSLContext is thread-safe and
/// expensive to build: build it once).
///
/// With `insecure`, certificate verification is off (self-signed lab certificates); otherwise the
/// server's chain is verified against the system trust store and the XMPP domain.
struct TLSSetup: Sendable {
    let context: NIOSSLContext
    /// The name sent as SNI and checked in the certificate: the XMPP domain.
    let serverHostname: String

    init(domain: String, insecure: Bool) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if insecure { configuration.certificateVerification = .none }
        context = try NIOSSLContext(configuration: configuration)
        serverHostname = domain
    }

    /// A handler for one connection. SNI is not sent for IP literals, as RFC 6066 requires.
    func makeHandler() throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
    }
}
