import Foundation
import LoadEngine
import NIOCore
import NIOSSL
import SessionCore
import XMPPCore

#if canImport(Glibc)
import Glibc
#endif

/// The probe's TLS: the run's own `TLSSetup` when certificates are verified (a failed verification
/// ends the probe at `tls` with the diagnosed problem, as it would end a run), and with `--insecure`
/// a context that verifies the chain anyway but only *observes* the verdict (first failed
/// certificate's problem, diagnosed by `TLSSetup.CertificateDiagnosis`) and lets the handshake go on,
/// so the probe can say whether the certificate would verify without `--insecure`.
struct ProbeTLS: Sendable {
    private let run: TLSSetup?
    private let observing: NIOSSLContext?
    /// The insecure context's exporter secrets (the run's `TLSSetup` keeps its own).
    private let observingSecrets: TLSExporterSecrets?
    let domain: String
    private let serverHostname: String?

    /// Channel binding is always on for the probe: it reports which `-PLUS` mechanisms this
    /// connection could use, and logs in with one.
    init(domain: String, insecure: Bool) throws {
        self.domain = domain
        serverHostname = TLSSetup.isIPLiteral(domain) ? nil : domain
        if insecure {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .noHostnameVerification
            let secrets = TLSExporterSecrets()
            configuration.keyLogCallback = secrets.keyLogCallback
            observing = try NIOSSLContext(configuration: configuration)
            observingSecrets = secrets
            run = nil
        } else {
            run = try TLSSetup(domain: domain, insecure: false, channelBinding: true)
            observing = nil
            observingSecrets = nil
        }
    }

    /// The connection's channel-binding data after its handshake (on its loop).
    func channelBindingData(in pipeline: ChannelPipeline.SynchronousOperations) -> ChannelBindingData {
        if let run { return run.channelBindingData(in: pipeline) }
        return ChannelBindingReader.read(pipeline, secrets: observingSecrets)
    }

    /// True when a failed verification fails the handshake (not `--insecure`).
    var verifies: Bool { run != nil }

    /// The handlers for the connection (bottom to top), and the verdict the observing callback fills.
    func makeHandlers() throws -> (handlers: [any ChannelHandler], verdict: ObservedVerdict) {
        let verdict = ObservedVerdict()
        if let run { return (try run.makeHandlers(), verdict) }
        let handler = try Self.handler(NIOSSLClientHandler.self, context: observing!, serverHostname: serverHostname) {
            result, certificate in
            if case .failed = result, verdict.problem == nil {
                verdict.problem = TLSSetup.CertificateDiagnosis.problem(of: certificate, now: time(nil))
            }
            return .certificateVerified
        }
        return ([handler], verdict)
    }

    /// The verification callback's findings. Loop-bound: written by NIOSSL's callback on the
    /// connection's loop, read there after the handshake.
    final class ObservedVerdict {
        var problem: TLSCertificateProblem?
    }

    /// As `TLSSetup.observingHandler`: NIOSSL's per-certificate callback, reached through the
    /// protocol so that this deliberate use does not warn.
    private static func handler<Handler: TLSSetup.VerdictObservingHandler>(
        _ type: Handler.Type, context: NIOSSLContext, serverHostname: String?,
        callback: @escaping NIOSSLVerificationCallback
    ) throws -> Handler {
        try Handler(context: context, serverHostname: serverHostname, verificationCallback: callback)
    }

    /// The TLS facts after the handshake: version, cipher (from the captured ServerHello), the leaf
    /// certificate and the verdict.
    func facts(handler: NIOSSLClientHandler, serverHello: [UInt8], verdict: ObservedVerdict) -> ProbeReport.TLSFacts {
        let certificate = handler.peerCertificate.map(Self.describe)
        var facts = ProbeReport.TLSFacts(
            version: handler.tlsVersion.map(TLSServerHello.name), cipher: TLSServerHello.cipherSuite(in: serverHello),
            certificate: certificate, verification: "verified")
        if !verifies {
            facts.verification = verdict.problem == nil ? "chain-only" : "failed"
            facts.problem = verdict.problem?.rawValue
            if let names = certificate?.dnsNames, !names.isEmpty, serverHostname != nil {
                facts.nameMatches = names.contains { Self.name($0, matches: domain) }
            }
        }
        return facts
    }

    static func describe(_ certificate: NIOSSLCertificate) -> ProbeReport.Certificate {
        func names(_ list: [SSLCertificateName]) -> String {
            list.map { "\(label($0.type))=\($0.value)" }.joined(separator: ", ")
        }
        let dns = certificate._subjectAlternativeNames().compactMap { name -> String? in
            guard name.nameType == .dnsName else { return nil }
            return name.contents.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
        }
        return ProbeReport.Certificate(
            subject: names(certificate.subjectName), issuer: names(certificate.issuerName),
            notBefore: iso8601(certificate.notValidBefore), notAfter: iso8601(certificate.notValidAfter), dnsNames: dns)
    }

    static func label(_ type: SSLCertificateNameType) -> String {
        switch type {
        case .commonName: return "CN"
        case .organization: return "O"
        case .organizationalUnit: return "OU"
        case .country: return "C"
        case .state: return "ST"
        case .city: return "L"
        case .emailAddress: return "emailAddress"
        default: return "?"
        }
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
