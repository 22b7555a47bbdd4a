// Why a server certificate failed verification, judged from its validity dates and DER bytes: the
// one place that turns a failed certificate into a `TLSCertificateProblem`.

import SessionCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The likeliest cause of a failed certificate, for the counted `tls-certificate-<problem>` kinds and
/// the probe's verdict. `OpenSSLError.problem(verifyResult:leaf:now:)` asks it when OpenSSL's verify
/// result alone does not say (an untrusted chain may be a self-signed leaf, an expired one, …).
enum CertificateDiagnosis {
    /// The problem of a certificate valid from `notValidBefore` to `notValidAfter` (seconds since
    /// 1970): its dates first, else whether it signed itself (the chain ends in a root the trust store
    /// lacks), else an untrusted issuer.
    static func problem(notValidBefore: time_t, notValidAfter: time_t, der: [UInt8], now: time_t) -> TLSCertificateProblem {
        if now > notValidAfter { return .expired }
        if now < notValidBefore { return .notYetValid }
        return isSelfIssued(der: der) ? .selfSigned : .untrusted
    }

    /// Whether a DER certificate's issuer and subject names are the same bytes (RFC 5280
    /// §4.1: Certificate → TBSCertificate → [version], serial, signature, issuer, validity, subject).
    static func isSelfIssued(der: [UInt8]) -> Bool {
        guard let certificate = DERElement.first(in: der[...]), certificate.tag == 0x30,
            let tbs = DERElement.first(in: certificate.content), tbs.tag == 0x30
        else { return false }
        var fields: [DERElement] = []
        var rest = tbs.content
        while fields.count < 6, let element = DERElement.first(in: rest) {
            fields.append(element)
            rest = element.rest
        }
        if fields.first?.tag == 0xA0 { fields.removeFirst() }  // explicit [0] version
        guard fields.count >= 5 else { return false }
        return fields[2].content.elementsEqual(fields[4].content)
    }

    /// One DER tag-length-value (definite lengths up to 4 bytes), as slices of the input.
    struct DERElement {
        let tag: UInt8
        let content: ArraySlice<UInt8>
        /// The bytes after this element.
        let rest: ArraySlice<UInt8>

        static func first(in bytes: ArraySlice<UInt8>) -> DERElement? {
            var index = bytes.startIndex
            guard bytes.count >= 2 else { return nil }
            let tag = bytes[index]
            index += 1
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard (1...4).contains(count), bytes.endIndex - index >= count else { return nil }
                length = 0
                for _ in 0..<count {
                    length = length << 8 | Int(bytes[index])
                    index += 1
                }
            }
            guard bytes.endIndex - index >= length else { return nil }
            return DERElement(tag: tag, content: bytes[index..<index + length], rest: bytes[(index + length)...])
        }
    }
}
