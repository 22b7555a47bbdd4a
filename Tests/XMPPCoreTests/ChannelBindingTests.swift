import Foundation
import Testing

@testable import XMPPCore

/// Channel-binding data, -PLUS gs2 headers, XEP-0474 hashes and FAST's HT mechanism, against
/// vectors from the specifications and from independent implementations (OpenSSL, Python's hashlib,
/// a real ejabberd 24.12). Plain values, no I/O.
@Suite struct ChannelBindingTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 9266 tls-exporter from a TLS 1.3 exporter master secret: `openssl s_client -keylogfile
    /// -keymatexport EXPORTER-Channel-Binding -keymatexportlen 32` against `openssl s_server` (both
    /// printed the same keying material), OpenSSL 3.0.x, one run per cipher suite's hash.
    @Test(arguments: [
        (
            "TLS_AES_128_GCM_SHA256", "2a55a6f06a0ef28822a2352487f9210843c674690e87a5edd7c6f26c5ca8f7ae",
            "0e6e07c1f66150f6e69bcdd8435808bd09a271e8680e053cfa9ef432373fc37c"
        ),
        (
            "TLS_AES_256_GCM_SHA384",
            "7300e28b4e00fe40663c035b14d4408f0071d98c47f6f961fa4481f244ada69ec47f620b8f6a5fc7e17761e4de05b52f",
            "ede3848fb3fc277d9574212bfe662c31fef1343d84d7da5c2540dc95ef64489a"
        ),
    ])
    func tlsExporterMatchesOpenSSL(suite: String, secret: String, expected: String) {
        #expect(ChannelBindingDerivation.tlsExporter(exporterMasterSecret: Self.hex(secret)).map(Self.hexString) == expected, "\(suite)")
    }

    @Test func tlsExporterNeedsASecretOfAKnownHash() {
        #expect(ChannelBindingDerivation.tlsExporter(exporterMasterSecret: [UInt8](repeating: 1, count: 20)) == nil)
        #expect(ChannelBindingDerivation.tlsExporter(exporterMasterSecret: []) == nil)
    }

    /// RFC 5929 §4.1: the certificate's signature hash, SHA-256 for MD5 and SHA-1, none for Ed25519.
    /// Certificates made with `openssl req -x509` (EC P-256 signed with SHA-1/256/384/512, RSA with MD5
    /// and RSASSA-PSS/SHA-384, Ed25519); expected digests from `openssl dgst` over the DER.
    @Test(arguments: [
        (
            "ec-sha1", "b2af7b1930c4bf79f233755875fcd8e4a6258c5299a02a22c1b798cced2b1aee",
            "MIIBazCCARKgAwIBAgIUGGcFbgmCXpxInmpdGWKdkiAhgo4wCQYHKoZIzj0EATAMMQowCAYDVQQDDAFlMB4XDTI2MTEyODA3MTQwMloXDTM2MT"
                + "EyNTA3MTQwMlowDDEKMAgGA1UEAwwBZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABFsyDGRjjiLcLnGl+PiZnHUOQP5b2Ql4OjuhHxe6ePOu"
                + "oHSKoUmeoj3E3dHXEXva2Xr0RzGVSDXlLM1SY+oNwpyjUzBRMB0GA1UdDgQWBBSfq6wNLnLpy8nmKd+Ut/y7nYSQZTAfBgNVHSMEGDAWgBSfq6"
                + "wNLnLpy8nmKd+Ut/y7nYSQZTAPBgNVHRMBAf8EBTADAQH/MAkGByqGSM49BAEDSAAwRQIgeK+BT5UKjp5XYCdKWi+AkqSy6A2QL2n2njI8dv7y"
                + "nSMCIQC29on2Fe3raVag8DDDpCIk/qZt9gLW98JtxU2vdXdnGA=="
        ),
        (
            "ec-sha256", "5dbecd7aee56649a1aab84d80fc3140842bf6072f0f52c8c42c91a3645faf0b8",
            "MIIBbTCCAROgAwIBAgIUfPTIB4BI8275E7q7l7MEpeyYOHYwCgYIKoZIzj0EAwIwDDEKMAgGA1UEAwwBZTAeFw0yNjExMjgwNzE0MDJaFw0zNj"
                + "ExMjUwNzE0MDJaMAwxCjAIBgNVBAMMAWUwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARbMgxkY44i3C5xpfj4mZx1DkD+W9kJeDo7oR8Xunjz"
                + "rqB0iqFJnqI9xN3R1xF72tl69EcxlUg15SzNUmPqDcKco1MwUTAdBgNVHQ4EFgQUn6usDS5y6cvJ5inflLf8u52EkGUwHwYDVR0jBBgwFoAUn6"
                + "usDS5y6cvJ5inflLf8u52EkGUwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiB7eaJDDVO4aVp9BBuuZW4JvuKCD73V4NcsNcIh"
                + "tBVsWAIhAML03gRc7oBk2Abdrf9/XYVez8PN4hg/lwt3Sn1dUrJJ"
        ),
        (
            "ec-sha384", "9389bd111b598f4c0be55c42b2a9c2b3b474be7f435223b77f22db2a32947255eb4ef7ed07fbe49be54dddd513f57e0d",
            "MIIBbjCCAROgAwIBAgIUAnHpK5YbKvKVrAnYBas3z+Eyt2IwCgYIKoZIzj0EAwMwDDEKMAgGA1UEAwwBZTAeFw0yNjExMjgwNzE0MDJaFw0zNj"
                + "ExMjUwNzE0MDJaMAwxCjAIBgNVBAMMAWUwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARbMgxkY44i3C5xpfj4mZx1DkD+W9kJeDo7oR8Xunjz"
                + "rqB0iqFJnqI9xN3R1xF72tl69EcxlUg15SzNUmPqDcKco1MwUTAdBgNVHQ4EFgQUn6usDS5y6cvJ5inflLf8u52EkGUwHwYDVR0jBBgwFoAUn6"
                + "usDS5y6cvJ5inflLf8u52EkGUwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAwNJADBGAiEAndgsfVZ1otFAVYLCRPMXFBlOW+ac5odkbdng"
                + "Z1wd5SsCIQDdMpWILkXSiJOUfOuH6S64n53kuUY6mrmC/XCwkKWT+A=="
        ),
        (
            "ec-sha512",
            "5d2a7696c6945fc78be2b525a9d18c81c7ad1113d4ef0d972a85ebce651f7cf33fae3899b16d3fbaaed7ff417b80239ed7651063c78634764101f6cb1af1fbbc",
            "MIIBbTCCAROgAwIBAgIUEz4Dwlj1ERUOkfhNJS+Zc9O6C9owCgYIKoZIzj0EAwQwDDEKMAgGA1UEAwwBZTAeFw0yNjExMjgwNzE0MDJaFw0zNj"
                + "ExMjUwNzE0MDJaMAwxCjAIBgNVBAMMAWUwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARbMgxkY44i3C5xpfj4mZx1DkD+W9kJeDo7oR8Xunjz"
                + "rqB0iqFJnqI9xN3R1xF72tl69EcxlUg15SzNUmPqDcKco1MwUTAdBgNVHQ4EFgQUn6usDS5y6cvJ5inflLf8u52EkGUwHwYDVR0jBBgwFoAUn6"
                + "usDS5y6cvJ5inflLf8u52EkGUwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDBANIADBFAiByDLbyrNOVGSMQYjgTY4xzBvRRs+s1KOxwKCBa"
                + "72VtAwIhAKbXya07+1P9HkfDYoPcrmhXAKIGrwrkGyiS5auJxsMO"
        ),
        (
            "rsamd5", "cba0dcf73d8d2e0caee92d022dd73f256a9b7d2364df61cb4958e9af84c084da",
            "MIIB9DCCAV2gAwIBAgIUWkm0WLp3qJfQcOg/Uh3xtJUNgHIwDQYJKoZIhvcNAQEEBQAwDDEKMAgGA1UEAwwBZTAeFw0yNjExMjgwNzE0MDJaFw"
                + "0zNjExMjUwNzE0MDJaMAwxCjAIBgNVBAMMAWUwgZ8wDQYJKoZIhvcNAQEBBQADgY0AMIGJAoGBANm2jovYGrGoKpwDAqaVtkhdtmyHNKHCmZqj"
                + "HwBmQZJaAAxvZ3rFc8aE5+X36lTVLPjEzNSVLq4di5TeIOP25FhSv4Qiwm4TYxt03TJr1ypRvIhrbzIaLlRusB0YuKKzFFPcu9ik6LiKpIykRP"
                + "l1mHKdk6IhVJjXEjDlGBr+UmzNAgMBAAGjUzBRMB0GA1UdDgQWBBSP8PrqkjDW/mV4uiqBi9ZVle6KvjAfBgNVHSMEGDAWgBSP8PrqkjDW/mV4"
                + "uiqBi9ZVle6KvjAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBBAUAA4GBALaLUyDgxvql7Hl9SEcx6ZM5e80ljsSim5jwAg2PunDpH/K7uQ"
                + "cpV5pFx/8zr1tRkDjfhr9lryP1v4cq4mdnoWm8mWIgajfmDyxwHH+EXBD4iStz4Bh0WNq/ZYRHxqy0vXmgqYHIQuG1mEczJDWHIAl6tagg28On" + "y8+pFdF2uL2h"
        ),
        (
            "pss384", "1d840d4724943baf6b7fc69bcb8864d16a3a19aec38d6f709efb29cbc5ed2e685b1d5c49fe7340beceddd81910f09649",
            "MIICXDCCAZGgAwIBAgIUeD7nGEF3KPqciIuSnZxyJs+WqPAwQQYJKoZIhvcNAQEKMDSgDzANBglghkgBZQMEAgIFAKEcMBoGCSqGSIb3DQEBCD"
                + "ANBglghkgBZQMEAgIFAKIDAgFOMAwxCjAIBgNVBAMMAWUwHhcNMjYxMTI4MDcxNDAyWhcNMzYxMTI1MDcxNDAyWjAMMQowCAYDVQQDDAFlMIGf"
                + "MA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDZto6L2BqxqCqcAwKmlbZIXbZshzShwpmaox8AZkGSWgAMb2d6xXPGhOfl9+pU1Sz4xMzUlS6uHY"
                + "uU3iDj9uRYUr+EIsJuE2MbdN0ya9cqUbyIa28yGi5UbrAdGLiisxRT3LvYpOi4iqSMpET5dZhynZOiIVSY1xIw5Rga/lJszQIDAQABo1MwUTAd"
                + "BgNVHQ4EFgQUj/D66pIw1v5leLoqgYvWVZXuir4wHwYDVR0jBBgwFoAUj/D66pIw1v5leLoqgYvWVZXuir4wDwYDVR0TAQH/BAUwAwEB/zBBBg"
                + "kqhkiG9w0BAQowNKAPMA0GCWCGSAFlAwQCAgUAoRwwGgYJKoZIhvcNAQEIMA0GCWCGSAFlAwQCAgUAogMCAU4DgYEAre9ts1GVEjSg0DUr8gyH"
                + "L0SVn+p70bxNIW+HBjzBcPGL8CxqzQb7DRDmHFy6tY9TPp41NrBSXSjXX87l15f+9z1I4LLBJnoS0YrGrlWwNkL3lO+IJ4qzVpESPRYfVT84AB"
                + "83/fMWw5HMHKbBCufoWg00oTgDln/gDVTlSsU9QN4="
        ),
        (
            "ed", nil,
            "MIIBLDCB36ADAgECAhQLnsmB1dtXVHrrIcGtMvUpFpjbMjAFBgMrZXAwDDEKMAgGA1UEAwwBZTAeFw0yNjExMjgwNzE0MDJaFw0zNjExMjUwNz"
                + "E0MDJaMAwxCjAIBgNVBAMMAWUwKjAFBgMrZXADIQDYhOsQ+nuI8+Uk2FXn/voTtOmUBOqqKo+y2oFi4dOiaKNTMFEwHQYDVR0OBBYEFEKIJhQJ"
                + "2FI43YcZgwuYnh/B59zhMB8GA1UdIwQYMBaAFEKIJhQJ2FI43YcZgwuYnh/B59zhMA8GA1UdEwEB/wQFMAMBAf8wBQYDK2VwA0EAY+7G7Y715a"
                + "J7UnstJ2CajDByU58us81//HWdl8zwplELB4rzrfXURZEkI9xP66MWng0gwR6Ibv+egMa7mTH+Dg=="
        ),
    ])
    func tlsServerEndPointHashesWithTheSignatureHash(name: String, expected: String?, der: String) throws {
        let bytes = try #require(Data(base64Encoded: der)).map { $0 }
        #expect(ChannelBindingDerivation.tlsServerEndPoint(certificateDER: bytes).map(Self.hexString) == expected, "\(name)")
    }

    @Test func tlsServerEndPointRefusesWhatIsNoCertificate() {
        #expect(ChannelBindingDerivation.tlsServerEndPoint(certificateDER: []) == nil)
        #expect(ChannelBindingDerivation.tlsServerEndPoint(certificateDER: [0x30, 0x82, 0xFF, 0xFF, 0x30]) == nil)
        #expect(ChannelBindingDerivation.tlsServerEndPoint(certificateDER: Array("not a certificate".utf8)) == nil)
    }

    /// XEP-0474 0.5.0's example (`h=`, SHA-1 of the 0x1E/0x1F-joined lists) and 0.3.0's (`d=`, `,`/`|`).
    @Test func downgradeProtectionHashesMatchTheXEPExamples() {
        let protection = SCRAMDowngradeProtection(
            mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], channelBindingTypes: ["tls-server-end-point", "tls-exporter"])
        #expect(Base64.encode(protection.expectedHash(.sha1)) == "G6k/rBLDqgOhRRaCuuatSDFkJ08=")
        #expect(Base64.encode(protection.expectedHash(.sha1, legacy: true)) == "dRc3RenuSY9ypgPpERowoaySQZY=")
        // No XEP-0440 element: no separator at all.
        let bare = SCRAMDowngradeProtection(mechanisms: ["PLAIN", "SCRAM-SHA-1"], channelBindingTypes: nil)
        #expect(bare.hashInput(legacy: false) == Array("PLAIN\u{1E}SCRAM-SHA-1".utf8))
    }

    /// SCRAM-SHA-1-PLUS with tls-exporter on XEP-0388's example values (user, pencil, its nonces, salt
    /// and 32 bytes of channel-binding data). The XEP's own proof does not verify; the expected proof
    /// and server signature were computed with Python's hashlib/hmac (RFC 5802 §3).
    @Test func scramPlusClientFinalCarriesTheBindingData() throws {
        let cbind = try #require(Data(base64Encoded: "cD10bHMtZXhwb3J0ZXIsLMcoQvOdBDePd4OswlmAWV3dg1a1Wh1tYPTBwVid10VU")).map { $0 }
        let data = Array(cbind.dropFirst("p=tls-exporter,,".utf8.count))
        #expect(data.count == 32)
        var client = SCRAMClient(
            algorithm: .sha1, username: "user", password: "pencil", clientNonce: "12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6",
            channelBinding: .bound(.tlsExporter, data))
        #expect(String(decoding: client.clientFirstMessage(), as: UTF8.self) == "p=tls-exporter,,n=user,r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6")
        let serverFirst = "r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6a09117a6-ac50-4f2f-93f1-93799c2bddf6,s=QSXCR+Q6sek8bf92,i=4096"
        let final = try client.clientFinalMessage(serverFirst: Array(serverFirst.utf8))
        #expect(
            String(decoding: final, as: UTF8.self)
                == "c=cD10bHMtZXhwb3J0ZXIsLMcoQvOdBDePd4OswlmAWV3dg1a1Wh1tYPTBwVid10VU,"
                + "r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6a09117a6-ac50-4f2f-93f1-93799c2bddf6,p=+8UyrQAeVIqsH2YovGeGTRx6zBM=")
        try client.verifyServerFinal(Array("v=GRqYg0SPMGrqPRk5HfMz9nGHq94=".utf8))
        #expect(client.downgradeCheck == .absent)
    }

    /// RFC 5802 §5.1's gs2 flags: `n` without binding, `y` when the server offered no -PLUS, `p=` when
    /// bound; `c=` is base64 of the header (and the data when bound).
    @Test(arguments: [
        (SCRAMChannelBinding.unsupported, "n,,", "biws"),
        (.notOfferedByServer, "y,,", "eSws"),
        (.bound(.tlsServerEndPoint, [1, 2, 3]), "p=tls-server-end-point,,", "cD10bHMtc2VydmVyLWVuZC1wb2ludCwsAQID"),
    ])
    func gs2HeaderAndCbind(binding: SCRAMChannelBinding, header: String, cbind: String) throws {
        var client = SCRAMClient(algorithm: .sha256, username: "user", password: "pencil", clientNonce: "abc", channelBinding: binding)
        #expect(String(decoding: client.clientFirstMessage(), as: UTF8.self) == header + "n=user,r=abc")
        let final = try client.clientFinalMessage(serverFirst: Array("r=abcdef,s=QSXCR+Q6sek8bf92,i=4096".utf8))
        #expect(String(decoding: final, as: UTF8.self).hasPrefix("c=\(cbind),r=abcdef,p="))
    }

    /// XEP-0474: a matching `h=` is recorded as verified; a mismatch fails before any PBKDF2 work.
    @Test func downgradeHashIsCheckedInServerFirst() throws {
        let offered = SCRAMDowngradeProtection(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], channelBindingTypes: ["tls-exporter"])
        let good = Base64.encode(offered.expectedHash(.sha1))
        var client = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "n", downgradeProtection: offered)
        _ = try client.keyRequest(serverFirst: Array("r=nX,s=QSXCR+Q6sek8bf92,i=4096,h=\(good)".utf8))
        #expect(client.downgradeCheck == .verified)

        // What a man in the middle shows the client (-PLUS removed) does not hash like what the server sent.
        let stripped = SCRAMDowngradeProtection(mechanisms: ["SCRAM-SHA-1"], channelBindingTypes: nil)
        var fooled = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "n", downgradeProtection: stripped)
        do {
            _ = try fooled.keyRequest(serverFirst: Array("r=nX,s=QSXCR+Q6sek8bf92,i=4096,h=\(good)".utf8))
            Issue.record("a downgrade-protection hash that does not match was accepted")
        } catch {
            #expect(error.kind == "sasl-downgrade")
        }
        // The older `d=` form is checked the same way.
        var legacy = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "n", downgradeProtection: offered)
        let old = Base64.encode(offered.expectedHash(.sha1, legacy: true))
        _ = try legacy.keyRequest(serverFirst: Array("r=nX,s=QSXCR+Q6sek8bf92,i=4096,d=\(old)".utf8))
        #expect(legacy.downgradeCheck == .verified)
    }

    /// HT-SHA-256-NONE against ejabberd 24.12 (Tests/LoadEngineTests/Transcripts/ejabberd-24.12-*.txt):
    /// the token it issued to user5, the initial response our client sent and the proof it returned.
    @Test func hashedTokenMatchesEjabberd() throws {
        let client = try #require(
            HashedTokenClient(
                mechanism: .htSHA256None, username: "user5", token: "n1cYxut5XHn3RysdIk6unCWVuPuGwrd7UYhQ/G3eoYg=", channelBinding: .none))
        #expect(Base64.encode(client.initialResponse()) == "dXNlcjUA7HORQMTP/t8gdt/3unQc+umcxSdKuPjqdhRQII5FF9c=")
        let proof = try #require(Data(base64Encoded: "8MVJ00dxIsrPGGIqt8YFFu3ZYeP11bxON0DpY3RRgMM=")).map { $0 }
        #expect(client.verifyServerProof(proof))
        #expect(!client.verifyServerProof(Array(proof.dropLast()) + [0]))
        #expect(!"\(client)".contains("n1cY"))
    }

    @Test func boundTokenMechanismsNeedTheirChannelBinding() {
        #expect(HashedTokenClient(mechanism: .htSHA256Endp, username: "u", token: "t", channelBinding: .none) == nil)
        let data = ChannelBindingData(tlsServerEndPoint: [1, 2, 3])
        #expect(HashedTokenClient(mechanism: .htSHA256Endp, username: "u", token: "t", channelBinding: data) != nil)
        #expect(HashedTokenClient(mechanism: .htSHA256Expr, username: "u", token: "t", channelBinding: data) == nil)
        let offered = ["HT-SHA-256-NONE", "HT-SHA-256-UNIQ", "HT-SHA-256-EXPR", "HT-SHA-256-ENDP"]
        #expect(FASTMechanism.strongest(offered: offered, channelBinding: data, advertisedTypes: ["tls-server-end-point"]) == .htSHA256Endp)
        #expect(FASTMechanism.strongest(offered: offered, channelBinding: data, advertisedTypes: nil) == .htSHA256None)
        let both = ChannelBindingData(tlsServerEndPoint: [1], tlsExporter: [2])
        #expect(
            FASTMechanism.strongest(offered: offered, channelBinding: both, advertisedTypes: ["tls-exporter", "tls-server-end-point"])
                == .htSHA256Expr)
        #expect(FASTMechanism.strongest(offered: ["HT-SHA-256-UNIQ"], channelBinding: both, advertisedTypes: ["tls-unique"]) == nil)
    }

    @Test func secretsStayOutOfDescriptions() {
        let token = FASTToken(mechanism: .htSHA256None, secret: "s3cr3t-token", expiry: "2026-12-28T07:11:50Z")
        #expect(!"\(token)".contains("s3cr3t"))
        let data = ChannelBindingData(tlsServerEndPoint: [0xAB, 0xCD], tlsExporter: [0xEF])
        #expect("\(data)" == "ChannelBindingData(tls-exporter, tls-server-end-point)")
        #expect("\(SCRAMChannelBinding.bound(.tlsExporter, [0xAB]))" == "p=tls-exporter")
    }
}
