/// Computes channel-binding data from what a TLS stack gives out: the server's certificate
/// (`tls-server-end-point`) and the TLS 1.3 exporter master secret (`tls-exporter`). Pure functions
/// of bytes, so they are tested with the RFCs' rules and with `openssl s_server -keymatexport`.
public enum ChannelBindingDerivation {
    /// RFC 9266's exporter label.
    public static let exporterLabel = "EXPORTER-Channel-Binding"
    /// RFC 9266: 32 bytes.
    public static let exporterLength = 32

    /// RFC 5929 §4.1 `tls-server-end-point`: the hash of the DER certificate, with the hash function of
    /// the certificate's signature algorithm — SHA-256 when that is MD5 or SHA-1. Nil when the DER
    /// cannot be read or the signature algorithm names no single hash (Ed25519, Ed448, unknown OIDs):
    /// RFC 5929 leaves those undefined, and guessing would make the server refuse the login.
    public static func tlsServerEndPoint(certificateDER der: [UInt8]) -> [UInt8]? {
        guard let hash = signatureHash(certificateDER: der) else { return nil }
        return hash.digest(der)
    }

    /// RFC 9266 `tls-exporter` for TLS 1.3 (RFC 8446 §7.5): `TLS-Exporter("EXPORTER-Channel-Binding",
    /// "", 32)` from the connection's exporter master secret (the `EXPORTER_SECRET` line of the key
    /// log). The hash is the cipher suite's: SHA-256 for a 32-byte secret, SHA-384 for a 48-byte one;
    /// nil for any other length.
    public static func tlsExporter(exporterMasterSecret secret: [UInt8]) -> [UInt8]? {
        tls13Exporter(exporterMasterSecret: secret, label: exporterLabel, context: [], length: exporterLength)
    }

    /// RFC 8446 §7.5: HKDF-Expand-Label(Derive-Secret(secret, label, ""), "exporter", Hash(context), length).
    static func tls13Exporter(exporterMasterSecret secret: [UInt8], label: String, context: [UInt8], length: Int) -> [UInt8]? {
        let hash: TLSHash
        switch secret.count {
        case 32: hash = .sha256
        case 48: hash = .sha384
        default: return nil
        }
        let derived = hash.hkdfExpandLabel(secret: secret, label: label, context: hash.digest([]), length: hash.size)
        return hash.hkdfExpandLabel(secret: derived, label: "exporter", context: hash.digest(context), length: length)
    }

    /// The hash RFC 5929 §4.1 assigns to a certificate: its signature algorithm's, upgraded to SHA-256
    /// from MD5 and SHA-1. Reads Certificate → signatureAlgorithm → algorithm OID (and, for RSASSA-PSS,
    /// the parameters' hashAlgorithm, SHA-1 by default).
    static func signatureHash(certificateDER der: [UInt8]) -> TLSHash? {
        guard let certificate = DERReader.first(in: der[...]), certificate.tag == 0x30,
            let tbs = DERReader.first(in: certificate.content), tbs.tag == 0x30,
            let algorithm = DERReader.first(in: tbs.rest), algorithm.tag == 0x30,
            let oid = DERReader.first(in: algorithm.content), oid.tag == 0x06
        else { return nil }
        let id = Array(oid.content)
        if id == rsassaPSS {
            // RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0] AlgorithmIdentifier DEFAULT sha1, … }
            guard let parameters = DERReader.first(in: oid.rest), parameters.tag == 0x30,
                let explicit = DERReader.first(in: parameters.content), explicit.tag == 0xA0,
                let identifier = DERReader.first(in: explicit.content), identifier.tag == 0x30,
                let hashOID = DERReader.first(in: identifier.content), hashOID.tag == 0x06
            else { return .sha256 }  // absent: SHA-1, upgraded
            return hashAlgorithms[Array(hashOID.content)].map(upgraded)
        }
        return signatureAlgorithms[id].map(upgraded)
    }

    /// A signature hash as RFC 5929 uses it (nil stands for MD5 and SHA-1).
    private static func upgraded(_ hash: TLSHash?) -> TLSHash { hash ?? .sha256 }

    /// 1.2.840.113549.1.1.10
    private static let rsassaPSS: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A]

    /// Signature algorithm OIDs (content bytes) → hash; a nil hash is MD5 or SHA-1 (SHA-256 is used).
    private static let signatureAlgorithms: [[UInt8]: TLSHash?] = {
        let rsa: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01]
        let ecdsa: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04]
        let nist: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03]
        return [
            rsa + [0x04]: nil,  // md5WithRSAEncryption
            rsa + [0x05]: nil,  // sha1WithRSAEncryption
            rsa + [0x0E]: .sha224, rsa + [0x0B]: .sha256, rsa + [0x0C]: .sha384, rsa + [0x0D]: .sha512,
            ecdsa + [0x01]: nil,  // ecdsa-with-SHA1
            ecdsa + [0x03, 0x01]: .sha224, ecdsa + [0x03, 0x02]: .sha256, ecdsa + [0x03, 0x03]: .sha384,
            ecdsa + [0x03, 0x04]: .sha512,
            [0x2A, 0x86, 0x48, 0xCE, 0x38, 0x04, 0x03]: nil,  // dsa-with-sha1
            nist + [0x01]: .sha224, nist + [0x02]: .sha256,  // dsa-with-sha224/256
        ]
    }()

    /// Hash algorithm OIDs (2.16.840.1.101.3.4.2.x and SHA-1) → hash, for RSASSA-PSS parameters.
    private static let hashAlgorithms: [[UInt8]: TLSHash?] = {
        let nist: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02]
        return [
            [0x2B, 0x0E, 0x03, 0x02, 0x1A]: nil,  // sha1
            nist + [0x01]: .sha256, nist + [0x02]: .sha384, nist + [0x03]: .sha512, nist + [0x04]: .sha224,
        ]
    }()
}
