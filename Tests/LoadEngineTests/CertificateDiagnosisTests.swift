import Foundation
import LoadResults
import SessionCore
import Testing

@testable import LoadEngine

/// Why a server certificate failed verification, from its dates and DER bytes; certificates made by
/// the openssl command line (a self-signed CA and a leaf it signed), as a lab server's would be.
@Suite struct CertificateDiagnosisTests {
    /// DER bytes of a fresh self-signed CA certificate and of a leaf it signed.
    static func makeCertificates() throws -> (ca: [UInt8], leaf: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-certs-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let steps = [
            "req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=TestCA -keyout ca.key -outform DER -out ca.der",
            "req -newkey rsa:2048 -nodes -subj /CN=load.test -keyout leaf.key -out leaf.csr",
            "x509 -req -in leaf.csr -CA ca.der -CAform DER -CAkey ca.key -CAcreateserial -days 30 -outform DER -out leaf.der",
        ]
        for step in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = step.split(separator: " ").map(String.init)
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "openssl \(step)")
        }
        let ca = try Data(contentsOf: URL(fileURLWithPath: directory + "/ca.der"))
        let leaf = try Data(contentsOf: URL(fileURLWithPath: directory + "/leaf.der"))
        return (Array(ca), Array(leaf))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func selfIssuedIsToldFromIssuedByAnother() throws {
        let (ca, leaf) = try Self.makeCertificates()
        #expect(TLSSetup.CertificateDiagnosis.isSelfIssued(der: ca))
        #expect(!TLSSetup.CertificateDiagnosis.isSelfIssued(der: leaf))
        // Truncated or empty input is not self-issued (and does not trap).
        for cut in [0, 1, 2, 10, ca.count / 2, ca.count - 1] {
            #expect(!TLSSetup.CertificateDiagnosis.isSelfIssued(der: Array(ca.prefix(cut))))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func problemsInOrderOfLikelihood() throws {
        let (ca, leaf) = try Self.makeCertificates()
        let (notBefore, notAfter) = (1_000, 2_000)
        let diagnose = { (der: [UInt8], now: Int) in
            TLSSetup.CertificateDiagnosis.problem(notValidBefore: notBefore, notValidAfter: notAfter, der: der, now: now)
        }
        #expect(diagnose(ca, 2_001) == .expired)
        #expect(diagnose(leaf, 2_001) == .expired)
        #expect(diagnose(ca, 999) == .notYetValid)
        #expect(diagnose(ca, 1_500) == .selfSigned)
        #expect(diagnose(leaf, 1_500) == .untrusted)
    }

    @Test(arguments: TLSCertificateProblem.allCases)
    func eachProblemHasItsKindAndIsNoDrop(_ problem: TLSCertificateProblem) {
        let error = SessionError.connection(.tlsCertificate(problem))
        #expect(error.kind == "tls-certificate-\(problem.rawValue)")
        #expect(!error.isConnectionDrop, "a reconnect cannot fix a certificate")
        #expect(ConnectionFailure(TLSSetup.CertificateError(problem: problem)) == .tlsCertificate(problem))
        #expect(ErrorHint.hint(for: error.kind)?.contains("--insecure") == true, "the report names --insecure")
    }
}
