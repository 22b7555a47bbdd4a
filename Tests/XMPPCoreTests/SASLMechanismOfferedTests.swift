import Foundation
import Testing

@testable import XMPPCore

/// `SASLMechanism(offered:)` parses a server's mechanism name as Foundation's
/// `trimmingCharacters(in: .whitespaces)` followed by `init?(name:)` did: the same result for names
/// with and without surrounding white space (tab, space, no-break and other Zs spaces and U+200B trimmed;
/// line breaks, which `.whitespaces` does not hold, kept). Plain values.
@Suite struct SASLMechanismOfferedTests {
    @Test(arguments: [
        "SCRAM-SHA-1", "scram-sha-1", " SCRAM-SHA-1 ", "\tPLAIN\t", "\u{00A0}SCRAM-SHA-256-PLUS\u{3000}",
        "\u{2009}scram-sha-512\u{202F}", "\nPLAIN", "PLAIN\r\n", " X-OAUTH2 ", "", "   ", "\t", "SCRAM SHA-1",
        " \u{0301}PLAIN", "PLAIN\u{200B}", "ANONYMOUS\u{85}",
    ])
    func parsesAsFoundationTrimmingDid(name: String) {
        #expect(SASLMechanism(offered: name) == SASLMechanism(name: name.trimmingCharacters(in: .whitespaces)))
    }

    @Test func offersPlusFindsAPaddedPlusName() {
        #expect(AuthenticationOffer.offersPlus(["PLAIN", " SCRAM-SHA-1-PLUS\t"]))
        #expect(!AuthenticationOffer.offersPlus(["PLAIN", "SCRAM-SHA-1", "\nSCRAM-SHA-1-PLUS"]))
    }
}
