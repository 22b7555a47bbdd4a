import Foundation
import NIOCore
import SessionCore

#if canImport(Glibc)
import Glibc
#endif

/// The probe's TLS: the run's own `TLSSetup` when certificates are verified (a failed verification
/// ends the probe at `tls` with the diagnosed problem, as it would end a run), and with `--insecure`
/// an observing context that verifies the chain anyway but lets the handshake go on whatever the
/// verdict (`OpenSSLContext(observesVerification:)`), so the probe can say whether the certificate
/// would verify without `--insecure`.
struct ProbeTLS: Sendable {
    private let setup: TLSSetup
    let domain: String
    /// True when a failed verification fails the handshake (not `--insecure`).
    let verifies: Bool

    init(domain: String, insecure: Bool) throws {
        self.domain = domain
        verifies = !insecure
        setup =
            insecure
            ? TLSSetup(domain: domain, context: try OpenSSLContext(verifies: false, observesVerification: true))
            : try TLSSetup(domain: domain, insecure: false)
    }

    /// The handlers for the connection (bottom to top).
    func makeHandlers() -> [any ChannelHandler] { setup.makeHandlers() }

    /// The TLS facts after the handshake: version, cipher, the leaf certificate and the verdict.
    func facts(handler: OpenSSLClientHandler) -> ProbeReport.TLSFacts {
        let certificate = handler.peerCertificate.map(Self.describe)
        var facts = ProbeReport.TLSFacts(
            version: handler.tlsVersion, cipher: handler.cipherSuite, certificate: certificate, verification: "verified")
        if !verifies {
            let problem = handler.certificateProblem
            facts.verification = problem == nil ? "chain-only" : "failed"
            facts.problem = problem?.rawValue
            if let names = certificate?.dnsNames, !names.isEmpty, setup.serverHostname != nil {
                facts.nameMatches = names.contains { Self.name($0, matches: domain) }
            }
        }
        return facts
    }

    static func describe(_ certificate: PeerCertificate) -> ProbeReport.Certificate {
        ProbeReport.Certificate(
            subject: certificate.subject, issuer: certificate.issuer, notBefore: iso8601(certificate.notValidBefore),
            notAfter: iso8601(certificate.notValidAfter), dnsNames: certificate.dnsNames)
    }

    static func iso8601(_ seconds: time_t) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// RFC 6125 §6.4 in short: the same name (case-insensitive), or a `*.` wildcard standing for
    /// exactly the leftmost label.
    static func name(_ pattern: String, matches domain: String) -> Bool {
        let pattern = pattern.lowercased()
        let domain = domain.lowercased()
        if pattern == domain { return true }
        guard pattern.hasPrefix("*."), let dot = domain.firstIndex(of: ".") else { return false }
        return domain[domain.index(after: dot)...] == pattern.dropFirst(2) && dot != domain.startIndex
    }
}
