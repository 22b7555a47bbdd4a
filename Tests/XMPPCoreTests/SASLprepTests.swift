import Testing

@testable import XMPPCore

/// SASLprep (RFC 4013) on the RFC's own examples, the tables' edges, and its use by SCRAM and PLAIN.
@Suite struct SASLprepTests {
    /// RFC 4013 §3, examples 1–5: (input, output).
    @Test(arguments: [
        ("I\u{00AD}X", "IX"),  // 1: SOFT HYPHEN mapped to nothing
        ("user", "user"),  // 2: no transformation
        ("USER", "USER"),  // 3: case preserved
        ("\u{00AA}", "a"),  // 4: output is NFKC
        ("\u{2168}", "IX"),  // 5: output is NFKC, matches #1
        // Beyond the RFC's list: non-ASCII space maps to U+0020, B.1 characters vanish, unassigned pass.
        ("pass\u{00A0}word", "pass word"),
        ("pa\u{200B}ss\u{FEFF}", "pass"),
        ("\u{0627}1\u{0628}", "\u{0627}1\u{0628}"),
        ("caf\u{0065}\u{0301}", "caf\u{00E9}"),
        ("\u{0378}x", "\u{0378}x"),
    ])
    func prepares(_ input: String, _ expected: String) throws {
        // Scalars, not String ==, which treats canonically equivalent strings as equal.
        #expect(try Array(SASLprep.prepare(input).unicodeScalars) == Array(expected.unicodeScalars))
    }

    /// RFC 4013 §3, examples 6–7, and one of each prohibited table: (input, problems).
    @Test(
        arguments: [
            ("\u{0007}", ["contains a control character (RFC 3454 C.2)"]),  // 6: prohibited character
            (
                "\u{0627}\u{0031}",  // 7: bidirectional check
                ["has right-to-left characters but does not start and end with one (RFC 3454 §6)"]
            ),
            ("\u{0627}a\u{0628}", ["mixes right-to-left and left-to-right characters (RFC 3454 §6)"]),
            ("a\u{E000}", ["contains a private-use character (RFC 3454 C.3)"]),
            ("a" + String(Unicode.Scalar(0xFDD0)!), ["contains a non-character code point (RFC 3454 C.4)"]),  // no literal for it
            ("a\u{FFFD}", ["contains a character inappropriate for plain text (RFC 3454 C.6, C.7)"]),
            ("a\u{202E}", ["contains a character that changes display properties (RFC 3454 C.8)"]),
            ("a\u{E0041}", ["contains a tagging character (RFC 3454 C.9)"]),
            // Every problem at once, each kind once.
            (
                "\u{0001}x\u{0002}\u{E000}",
                ["contains a control character (RFC 3454 C.2)", "contains a private-use character (RFC 3454 C.3)"]
            ),
        ] as [(String, [String])])
    func refuses(_ input: String, _ problems: [String]) {
        #expect(throws: SASLprepError(problems: problems)) { try SASLprep.prepare(input) }
    }

    @Test func errorsNeverContainTheText() {
        do {
            _ = try SASLprep.prepare("s3cr\u{0007}t")
            Issue.record("a control character was accepted")
        } catch {
            #expect(!error.description.contains("s3cr"))
        }
    }

    @Test func tablesAreSortedAndDisjoint() {
        let tables = [
            StringprepTables.mappedToNothing, StringprepTables.nonASCIISpace, StringprepTables.controls,
            StringprepTables.privateUse, StringprepTables.nonCharacters, StringprepTables.notPlainText,
            StringprepTables.displayChanging, StringprepTables.tagging, StringprepTables.randALCat, StringprepTables.lCat,
        ]
        for table in tables {
            #expect(!table.isEmpty)
            for (previous, next) in zip(table, table.dropFirst()) { #expect(previous.upperBound < next.lowerBound) }
        }
        #expect(StringprepTables.contains(StringprepTables.lCat, UInt32(UInt8(ascii: "a"))))
        #expect(!StringprepTables.contains(StringprepTables.lCat, 0x0627))
        #expect(StringprepTables.contains(StringprepTables.randALCat, 0x0627))
    }

    /// SCRAM prepares the password: `I\u{AD}X` and `\u{2168}` prove the same key as `IX`.
    @Test(arguments: ["I\u{00AD}X", "\u{2168}"])
    func scramUsesThePreparedPassword(_ password: String) throws {
        let serverFirst = Array("r=nonce123server,s=QSXCR+Q6sek8bf92,i=4096".utf8)
        var plain = SCRAMClient(algorithm: .sha256, username: "user", password: "IX", clientNonce: "nonce123")
        var prepared = SCRAMClient(algorithm: .sha256, username: "user", password: password, clientNonce: "nonce123")
        #expect(try prepared.clientFinalMessage(serverFirst: serverFirst) == plain.clientFinalMessage(serverFirst: serverFirst))
    }

    /// SCRAM prepares the user name before escaping `=` and `,` (RFC 5802 §5.1).
    @Test func scramPreparesTheUserName() {
        let client = SCRAMClient(algorithm: .sha1, username: "\u{2168}=\u{00A0}", password: "p", clientNonce: "n")
        #expect(String(decoding: client.clientFirstMessage(), as: UTF8.self) == "n,,n=IX=3D ,r=n")
    }

    @Test func plainPreparesBoth() {
        let response = SASLPlain(username: "\u{00AA}b", password: "I\u{00AD}X").initialResponse()
        #expect(response == [0] + Array("ab".utf8) + [0] + Array("IX".utf8))
    }
}
