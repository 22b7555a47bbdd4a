/// The server's own words for error kinds: one example text per kind (a stanza error's `<text/>`),
/// first seen wins, so a report can say why `stanza-forbidden` happened, not only how often.
///
/// Bounded like the kinds themselves: at most `CardinalityCap.errorKinds` kinds, each text at most
/// `maxCharacters` characters after `sanitized(_:)` (control characters and runs of whitespace
/// become one space, so a text is one printable line; HTML escaping is the renderer's job). Used by
/// `MetricsRecorder` (per loop), `IntervalSnapshot` (merges) and `RunSummary` (`error_examples`).
public enum ErrorExamples {
    /// Longest example kept, in characters (longer texts end in `…`).
    public static let maxCharacters = 160

    /// `text` as one printable line of at most `maxCharacters` characters; nil when nothing is left.
    public static func sanitized(_ text: String) -> String? {
        var line = ""
        var pendingSpace = false
        var count = 0
        for character in text {
            let blank =
                character.isWhitespace
                || character.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
            if blank {
                pendingSpace = !line.isEmpty
                continue
            }
            if pendingSpace {
                line.append(" ")
                count += 1
                pendingSpace = false
            }
            if count == maxCharacters - 1 {
                line.append("…")
                return line
            }
            line.append(character)
            count += 1
        }
        return line.isEmpty ? nil : line
    }

    /// Adds `text` for `kind` unless the kind already has one or `examples` holds the cap; returns
    /// whether it was added.
    @discardableResult
    public static func add(_ text: String, kind: String, to examples: inout [String: String]) -> Bool {
        guard examples[kind] == nil, examples.count < CardinalityCap.errorKinds else { return false }
        examples[kind] = text
        return true
    }

    /// `later`'s examples for kinds `earlier` has none for, within the cap (first seen wins).
    public static func merge(_ earlier: [String: String]?, _ later: [String: String]?) -> [String: String]? {
        guard let later, !later.isEmpty else { return earlier }
        var merged = earlier ?? [:]
        for (kind, text) in later.sorted(by: { $0.key < $1.key }) { add(text, kind: kind, to: &merged) }
        return merged
    }
}
