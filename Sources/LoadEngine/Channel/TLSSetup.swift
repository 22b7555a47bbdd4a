import NIOCore
import NIOSSL
import NIOTLS
import SessionCore
import XMPPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one TLS client context of a run, shared by every session (NIOSSLContext is thread-safe and
/// expensive to build: build it once).
///
/// With `insecure`, certificate verification is off (self-signed lab certificates); otherwise the
/// server's chain is verified against the system trust store and the XMPP domain (over `wss://` and
/// `https://`, the URL's host: `makeHandlers(httpHost:)`). When the domain is
/// an IP literal (`--domain 127.0.0.1`), no SNI is sent (RFC 6066 forbids IP literals there) and the
/// certificate is verified against the address the session connected to (NIOSSL checks the peer's
/// IP address when no hostname is given), so such a server needs an IP subjectAltName — or
/// `--insecure` in a lab.
///
/// A verification failure says why: `makeHandlers()` adds, above the TLS handler, a
/// `CertificateDiagnosis` that turns NIOSSL's bare handshake failure into a `CertificateError`
/// naming the problem (expired, not yet valid, self-signed, untrusted; a name mismatch is NIOSSL's
/// own error), counted as `tls-certificate-<problem>` (`ConnectionFailure.tlsCertificate`).
///
/// Channel binding (`channelBinding: true`): the context's key log feeds `exporterSecrets`, and
/// `channelBindingData(in:)`, called from the `handshakeCompleted` event's handler, reads
/// `tls-server-end-point` and (TLS 1.3) `tls-exporter` for `LoginMachine.tlsEstablished(channelBinding:)`.
/// Off, nothing changes (no key log).
package struct TLSSetup: Sendable {
    package let context: NIOSSLContext
    /// The name sent as SNI and checked in the certificate: the XMPP domain; nil for an IP literal.
    package let serverHostname: String?
    /// Whether certificates are verified (not `--insecure`): only then is there something to diagnose.
    package let verifies: Bool
    /// The exporter secrets the key log hands out, when channel binding is on.
    package let exporterSecrets: TLSExporterSecrets?

    package init(domain: String, insecure: Bool, channelBinding: Bool = false) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if insecure { configuration.certificateVerification = .none }
        exporterSecrets = channelBinding ? TLSExporterSecrets() : nil
        configuration.keyLogCallback = exporterSecrets?.keyLogCallback
        context = try NIOSSLContext(configuration: configuration)
        serverHostname = Self.isIPLiteral(domain) ? nil : domain
        verifies = !insecure
    }

    /// The handlers for one connection, in pipeline order: TLS, then (when verifying) the diagnosis
    /// of a failed verification.
    package func makeHandlers() throws -> [any ChannelHandler] {
        try makeHandlers(serverHostname: serverHostname)
    }

    /// The handlers for one connection to a `wss://` or `https://` endpoint whose URL names `host`:
    /// as `makeHandlers()`, but the name sent as SNI and checked in the certificate is that host, not
    /// the XMPP domain (RFC 2818 §3.1: an HTTPS server's certificate is for the host the client asked
    /// for); an IP-literal host sends no SNI and is checked against the certificate's IP addresses.
    package func makeHandlers(httpHost host: String) throws -> [any ChannelHandler] {
        try makeHandlers(serverHostname: Self.isIPLiteral(host) ? nil : host)
    }

    /// The connection's channel-binding data: call on its loop from the handler of
    /// `TLSUserEvent.handshakeCompleted`, synchronously (empty without channel binding).
    package func channelBindingData(in pipeline: ChannelPipeline.SynchronousOperations) -> ChannelBindingData {
        guard exporterSecrets != nil else { return .none }
        return ChannelBindingReader.read(pipeline, secrets: exporterSecrets)
    }

    private func makeHandlers(serverHostname: String?) throws -> [any ChannelHandler] {
        guard verifies else { return [try NIOSSLClientHandler(context: context, serverHostname: serverHostname)] }
        let diagnosis = CertificateDiagnosis()
        let tls = try Self.observingHandler(NIOSSLClientHandler.self, context: context, serverHostname: serverHostname) {
            result, certificate in
            if case .failed = result { diagnosis.certificateFailed(certificate) }
            return result
        }
        return [tls, diagnosis]
    }

    /// NIOSSL deprecates its per-certificate verification callback in favour of one that replaces
    /// BoringSSL's verification altogether; we only observe the verdict BoringSSL made (and return
    /// it unchanged), which only the older callback gives. Reached through `VerdictObservingHandler`
    /// so that this one deliberate use does not warn at every build.
    private static func observingHandler<Handler: VerdictObservingHandler>(
        _ type: Handler.Type, context: NIOSSLContext, serverHostname: String?,
        callback: @escaping NIOSSLVerificationCallback
    ) throws -> Handler {
        try Handler(context: context, serverHostname: serverHostname, verificationCallback: callback)
    }

    /// True for an IPv4 or IPv6 address literal (brackets allowed around IPv6).
    package static func isIPLiteral(_ text: String) -> Bool {
        var host = text
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The NIOSSL client handler's initializer with a verification callback (see `observingHandler`).
    package protocol VerdictObservingHandler {
        init(context: NIOSSLContext, serverHostname: String?, verificationCallback: NIOSSLVerificationCallback?) throws
    }

    /// A certificate verification failure with its cause; `ConnectionFailure(_:)` maps it to
    /// `.tlsCertificate(problem)`.
    package struct CertificateError: Error, Hashable {
        package let problem: TLSCertificateProblem
    }

    /// Sits right above the TLS handler of one connection: remembers why the first certificate
    /// failed verification (told by NIOSSL's verification callback, on the loop) and replaces the
    /// handshake error that follows with a `CertificateError`. Other errors pass unchanged. Once the
    /// handshake completed it removes itself, so an established session pays nothing for it.
    /// Loop-bound: one instance per channel, used only on its loop.
    package final class CertificateDiagnosis: ChannelInboundHandler, RemovableChannelHandler {
        package typealias InboundIn = NIOAny

        private(set) var problem: TLSCertificateProblem?

        /// NIOSSL's verification callback reported `certificate` as failed; the first cause wins.
        package func certificateFailed(_ certificate: NIOSSLCertificate, now: time_t = time(nil)) {
            guard problem == nil else { return }
            problem = Self.problem(of: certificate, now: now)
        }

        package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            context.fireUserInboundEventTriggered(event)
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let problem, error is NIOSSLError || error is BoringSSLError {
                context.fireErrorCaught(CertificateError(problem: problem))
            } else {
                context.fireErrorCaught(error)
            }
        }

        /// The likeliest cause of a failed certificate: its validity dates, else whether it signed
        /// itself (the chain ends in a root the trust store lacks), else an untrusted issuer.
        package static func problem(of certificate: NIOSSLCertificate, now: time_t) -> TLSCertificateProblem {
            problem(
                notValidBefore: certificate.notValidBefore, notValidAfter: certificate.notValidAfter,
                der: (try? certificate.toDERBytes()) ?? [], now: now)
        }

        /// `problem(of:now:)` on the certificate's validity dates (seconds since 1970) and DER bytes.
        package static func problem(notValidBefore: time_t, notValidAfter: time_t, der: [UInt8], now: time_t) -> TLSCertificateProblem {
            if now > notValidAfter { return .expired }
            if now < notValidBefore { return .notYetValid }
            return isSelfIssued(der: der) ? .selfSigned : .untrusted
        }

        /// Whether a DER certificate's issuer and subject names are the same bytes (RFC 5280
        /// §4.1: Certificate → TBSCertificate → [version], serial, signature, issuer, validity, subject).
        package static func isSelfIssued(der: [UInt8]) -> Bool {
            guard let certificate = DERReader.first(in: der[...]), certificate.tag == 0x30,
                let tbs = DERReader.first(in: certificate.content), tbs.tag == 0x30
            else { return false }
            var fields: [DERReader] = []
            var rest = tbs.content
            while fields.count < 6, let element = DERReader.first(in: rest) {
                fields.append(element)
                rest = element.rest
            }
            if fields.first?.tag == 0xA0 { fields.removeFirst() }  // explicit [0] version
            guard fields.count >= 5 else { return false }
            return fields[2].content.elementsEqual(fields[4].content)
        }
    }
}

extension NIOSSLClientHandler: TLSSetup.VerdictObservingHandler {}
