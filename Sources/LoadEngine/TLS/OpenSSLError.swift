// The typed errors of the OpenSSL TLS client (OpenSSLContext, OpenSSLClientHandler), with the
// certificate verdict a failed verification carries.

import CLibSSL
import SessionCore

#if canImport(Glibc)
import Glibc
#endif

/// A TLS failure from OpenSSL: what failed, OpenSSL's reason text and, for a certificate that failed
/// verification, OpenSSL's verify result (`X509_V_ERR_…`) and the problem it means.
/// `ConnectionFailure(_:)` counts `.certificate` as `tls-certificate-<problem>`, the rest as `tls`.
public struct OpenSSLError: Error, Hashable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The context could not be built (trust store, ALPN list).
        case setup
        /// The server's certificate failed verification (`verifyResult`, `problem`).
        case certificate
        /// The handshake failed for another reason (protocol or cipher mismatch, an alert).
        case handshake
        /// The connection closed before the handshake completed.
        case unexpectedEOF = "unexpected-eof"
        /// A record could not be decrypted or encrypted after the handshake.
        case record
    }

    public let kind: Kind
    /// OpenSSL's reason (its error queue, or the verify result's text).
    public let reason: String
    /// `X509_V_OK` (0) unless the certificate failed verification.
    public var verifyResult: Int = 0
    /// The certificate problem for `.certificate`; nil otherwise.
    public var problem: TLSCertificateProblem?

    public var description: String {
        if let problem { return "TLS certificate \(problem.rawValue): \(reason)" }
        return "TLS \(kind.rawValue): \(reason)"
    }

    /// Empties this thread's OpenSSL error queue and returns its entries' text ("" when empty).
    static func drainQueue() -> String {
        var parts: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            parts.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.joined(separator: "; ")
    }

    /// The problem a failed verification means, from OpenSSL's verify result and the server's leaf
    /// certificate (its dates first, as `TLSSetup.CertificateDiagnosis` judges NIOSSL's failures).
    static func problem(verifyResult: Int, leaf: OpaquePointer?, now: time_t) -> TLSCertificateProblem {
        switch Int32(verifyResult) {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH, X509_V_ERR_EMAIL_MISMATCH:
            return .hostnameMismatch
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid
        default: break
        }
        let selfSignedCode =
            Int32(verifyResult) == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            || Int32(verifyResult) == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        guard let leaf, let before = seconds(X509_get0_notBefore(leaf)), let after = seconds(X509_get0_notAfter(leaf))
        else { return selfSignedCode ? .selfSigned : .untrusted }
        let problem = TLSSetup.CertificateDiagnosis.problem(
            notValidBefore: before, notValidAfter: after, der: der(of: leaf), now: now)
        return problem == .untrusted && selfSignedCode ? .selfSigned : problem
    }

    /// An ASN1_TIME as seconds since 1970 (nil when OpenSSL cannot read it).
    static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> time_t? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return timegm(&parts)
    }

    /// A certificate's DER bytes (empty when OpenSSL cannot encode it).
    static func der(of certificate: OpaquePointer) -> [UInt8] {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(certificate, &cursor)
        }
        return bytes
    }
}
