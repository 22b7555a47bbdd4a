// The server's leaf certificate as the probe reports it: subject, issuer, validity and DNS names,
// read from OpenSSL's X509 structure.

import CLibSSL

#if canImport(Glibc)
import Glibc
#endif

/// What the probe says about the server's certificate. Names are OpenSSL's short attribute names in
/// the certificate's order ("CN=example.org, O=Example"); dates are seconds since 1970 (UTC).
struct PeerCertificate: Equatable {
    var subject: String
    var issuer: String
    var notValidBefore: time_t
    var notValidAfter: time_t
    /// The subjectAltName extension's dNSName entries, in order (empty when it has none).
    var dnsNames: [String]

    /// Reads `certificate` (an `X509 *`, not owned); nil when its dates cannot be read.
    init?(_ certificate: OpaquePointer) {
        guard let before = OpenSSLError.seconds(X509_get0_notBefore(certificate)),
            let after = OpenSSLError.seconds(X509_get0_notAfter(certificate))
        else { return nil }
        subject = Self.text(of: X509_get_subject_name(certificate))
        issuer = Self.text(of: X509_get_issuer_name(certificate))
        notValidBefore = before
        notValidAfter = after
        dnsNames = []
        guard let names = xl_X509_subject_alt_names(certificate) else { return }
        defer { xl_GENERAL_NAMES_free(names) }
        for index in 0..<xl_GENERAL_NAMES_count(names) {
            var length: Int32 = 0
            guard let bytes = xl_GENERAL_NAMES_dns_at(names, index, &length) else { continue }
            dnsNames.append(String(decoding: UnsafeBufferPointer(start: bytes, count: Int(length)), as: UTF8.self))
        }
    }

    /// "CN=…, O=…": each entry's short name (`emailAddress` for an e-mail) and its UTF-8 value.
    static func text(of name: OpaquePointer?) -> String {
        guard let name else { return "" }
        var parts: [String] = []
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index) else { continue }
            let nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry))
            let label = OBJ_nid2sn(nid).map { String(cString: $0) } ?? "?"
            var value = "?"
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry))
            if length >= 0, let utf8 {
                value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
                xl_OPENSSL_free(utf8)
            }
            parts.append("\(label)=\(value)")
        }
        return parts.joined(separator: ", ")
    }
}
