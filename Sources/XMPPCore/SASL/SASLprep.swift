import Foundation

/// SASLprep (RFC 4013): the stringprep profile SCRAM (RFC 5802 §2.2) and PLAIN (RFC 4616 §2) apply
/// to user names and passwords before use, so that `I\u{AD}X`, `\u{2168}` and `IX` are one password.
///
/// Steps, in the RFC's order: map (non-ASCII spaces, table C.1.2, to U+0020; table B.1 characters to
/// nothing), normalize (Unicode NFKC), prohibit (tables C.1.2 and C.2.1–C.9), check bidirectional
/// text (RFC 3454 §6: a string with R/AL characters has no L characters and starts and ends with
/// R/AL). Strings are "query" strings: unassigned code points pass (RFC 5802 §2.2).
///
/// Cost: printable ASCII (U+0020–U+007E), what test accounts use, is returned as is after one scan
/// of its bytes; anything else is mapped, normalized (Foundation) and checked against the tables in
/// `StringprepTables` (binary search per scalar).
public enum SASLprep {
    /// The prepared form of `text`, or every problem that makes it unusable (never the text itself).
    public static func prepare(_ text: String) throws(SASLprepError) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) { return text }
        var mapped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if StringprepTables.contains(StringprepTables.mappedToNothing, scalar.value) { continue }
            if StringprepTables.contains(StringprepTables.nonASCIISpace, scalar.value) {
                mapped.append(" ")
            } else {
                mapped.append(scalar)
            }
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping
        let problems = Self.problems(normalized)
        guard problems.isEmpty else { throw SASLprepError(problems: problems) }
        return normalized
    }

    /// The prepared form of `text`, or `text` unchanged when it cannot be prepared (callers that
    /// checked their input up front, e.g. the command line, never hit the fallback).
    public static func preparedOrUnchanged(_ text: String) -> String {
        (try? prepare(text)) ?? text
    }

    /// Every RFC 4013 §2.3–2.4 problem of a mapped and normalized string, one sentence per kind.
    static func problems(_ normalized: String) -> [String] {
        var problems: [String] = []
        func add(_ problem: String) { if !problems.contains(problem) { problems.append(problem) } }
        var hasRandAL = false
        var hasL = false
        for scalar in normalized.unicodeScalars {
            let value = scalar.value
            if let prohibition = Self.prohibition(value) { add("contains \(prohibition)") }
            if StringprepTables.contains(StringprepTables.randALCat, value) { hasRandAL = true }
            if StringprepTables.contains(StringprepTables.lCat, value) { hasL = true }
        }
        if hasRandAL {
            if hasL { add("mixes right-to-left and left-to-right characters (RFC 3454 §6)") }
            let first = normalized.unicodeScalars.first!.value
            let last = normalized.unicodeScalars.last!.value
            if !StringprepTables.contains(StringprepTables.randALCat, first) || !StringprepTables.contains(StringprepTables.randALCat, last) {
                add("has right-to-left characters but does not start and end with one (RFC 3454 §6)")
            }
        }
        return problems
    }

    /// What a prohibited code point is (RFC 4013 §2.3), or nil when it is allowed.
    private static func prohibition(_ value: UInt32) -> String? {
        if value >= 0x20 && value < 0x7F { return nil }
        if StringprepTables.contains(StringprepTables.nonASCIISpace, value) { return "a non-ASCII space (RFC 3454 C.1.2)" }
        if StringprepTables.contains(StringprepTables.controls, value) { return "a control character (RFC 3454 C.2)" }
        if StringprepTables.contains(StringprepTables.privateUse, value) { return "a private-use character (RFC 3454 C.3)" }
        if StringprepTables.contains(StringprepTables.nonCharacters, value) { return "a non-character code point (RFC 3454 C.4)" }
        if StringprepTables.contains(StringprepTables.notPlainText, value) {
            return "a character inappropriate for plain text (RFC 3454 C.6, C.7)"
        }
        if StringprepTables.contains(StringprepTables.displayChanging, value) {
            return "a character that changes display properties (RFC 3454 C.8)"
        }
        if StringprepTables.contains(StringprepTables.tagging, value) { return "a tagging character (RFC 3454 C.9)" }
        return nil
    }
}
