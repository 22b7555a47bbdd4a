import Foundation

// The `keep=` list of a Prometheus monitor: a small grammar, parsed once, every mistake a usage error.

extension SeriesSelector {
    /// Parses a comma-separated `keep=` list (`all` is not a selector: `MonitorSource` handles it).
    /// Commas inside `{…}`, `(…)` and quotes do not separate entries. Throws the first problem, with
    /// the entry it is in.
    public static func parseList(_ text: String) throws(SelectorSyntaxError) -> [SeriesSelector] {
        var selectors: [SeriesSelector] = []
        for entry in try splitTopLevel(text, separator: ",") {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw SelectorSyntaxError(entry: entry, problem: "an empty entry in the keep= list") }
            selectors.append(try parse(trimmed))
        }
        guard !selectors.isEmpty else { throw SelectorSyntaxError(entry: text, problem: "keep= lists no series") }
        return selectors
    }

    /// One selector: `NAME`, `PREFIX*`, `NAME{…}`, `sum(…)`, `sum by (a,b) (…)`.
    public static func parse(_ text: String) throws(SelectorSyntaxError) -> SeriesSelector {
        var reader = Reader(text)
        let selector = try reader.selector()
        reader.skipSpaces()
        guard reader.atEnd else {
            throw SelectorSyntaxError(entry: text, problem: "unexpected \"\(reader.rest)\" after the selector")
        }
        return selector
    }

    /// Splits at `separator` outside quotes, braces and parentheses; fails on unbalanced ones.
    static func splitTopLevel(_ text: String, separator: Character) throws(SelectorSyntaxError) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var quoted = false
        var escaped = false
        for character in text {
            if quoted {
                current.append(character)
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                }
                continue
            }
            switch character {
            case "\"": quoted = true
            case "{", "(": depth += 1
            case "}", ")":
                depth -= 1
                if depth < 0 { throw SelectorSyntaxError(entry: text, problem: "\"\(character)\" without its opening bracket") }
            default: break
            }
            if character == separator && depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if quoted { throw SelectorSyntaxError(entry: text, problem: "a label value's closing quote is missing") }
        if depth > 0 { throw SelectorSyntaxError(entry: text, problem: "a \"{\" or \"(\" is not closed") }
        parts.append(current)
        return parts
    }

    /// A cursor over one selector's characters.
    private struct Reader {
        let text: String
        private let characters: [Character]
        private var index = 0

        init(_ text: String) {
            self.text = text
            characters = Array(text)
        }

        var atEnd: Bool { index >= characters.count }
        var rest: String { String(characters[index...]) }
        private var current: Character? { atEnd ? nil : characters[index] }

        mutating func skipSpaces() { while current == " " || current == "\t" { index += 1 } }

        private func fail(_ problem: String) -> SelectorSyntaxError { SelectorSyntaxError(entry: text, problem: problem) }

        private mutating func expect(_ character: Character) throws(SelectorSyntaxError) {
            skipSpaces()
            guard current == character else {
                throw fail("expected \"\(character)\"" + (atEnd ? " at the end" : " before \"\(rest)\""))
            }
            index += 1
        }

        mutating func selector() throws(SelectorSyntaxError) -> SeriesSelector {
            skipSpaces()
            let start = index
            let word = identifier(allowColon: true)
            if word == "sum" {
                skipSpaces()
                if current == "(" || lookingAt("by") {
                    var by: [String]?
                    if lookingAt("by") {
                        index += 2
                        try expect("(")
                        by = try labelList()
                        try expect(")")
                    }
                    try expect("(")
                    var inner = try series()
                    try expect(")")
                    inner.aggregation = by.map { .sumBy($0) } ?? .sum
                    return inner
                }
            }
            index = start
            return try series()
        }

        private func lookingAt(_ word: String) -> Bool {
            let end = index + word.count
            guard end <= characters.count, String(characters[index..<end]) == word else { return false }
            return end == characters.count || !Self.isNameCharacter(characters[end], allowColon: true)
        }

        private mutating func labelList() throws(SelectorSyntaxError) -> [String] {
            var labels: [String] = []
            repeat {
                skipSpaces()
                if current == "," { index += 1 }
                skipSpaces()
                let label = identifier(allowColon: false)
                guard !label.isEmpty else { throw fail("expected a label name in \"by (…)\"") }
                guard !labels.contains(label) else { throw fail("label \"\(label)\" is listed twice in \"by (…)\"") }
                labels.append(label)
                skipSpaces()
            } while current == ","
            return labels
        }

        private mutating func series() throws(SelectorSyntaxError) -> SeriesSelector {
            skipSpaces()
            guard let first = current, Self.isNameStart(first, allowColon: true) else {
                throw fail(atEnd ? "expected a metric name" : "a metric name cannot start with \"\(current!)\"")
            }
            let name = identifier(allowColon: true)
            var isPrefix = false
            if current == "*" {
                isPrefix = true
                index += 1
            }
            var matchers: [LabelMatcher] = []
            skipSpaces()
            if current == "{" {
                index += 1
                skipSpaces()
                while current != "}" {
                    matchers.append(try matcher())
                    skipSpaces()
                    if current == "," {
                        index += 1
                        skipSpaces()
                    } else if current != "}" {
                        throw fail(atEnd ? "a \"{\" is not closed" : "expected \",\" or \"}\" before \"\(rest)\"")
                    }
                }
                index += 1
            }
            return SeriesSelector(name: name, isPrefix: isPrefix, matchers: matchers)
        }

        private mutating func matcher() throws(SelectorSyntaxError) -> LabelMatcher {
            let label = identifier(allowColon: false)
            guard !label.isEmpty else { throw fail("expected a label name" + (atEnd ? "" : " before \"\(rest)\"")) }
            skipSpaces()
            let comparison: Comparison
            if current == "=" {
                index += 1
                if current == "~" { throw fail("regular expressions (=~) are not supported; list the values, or use PREFIX*") }
                comparison = .equal
            } else if current == "!", index + 1 < characters.count, characters[index + 1] == "=" {
                index += 2
                if current == "~" { throw fail("regular expressions (!~) are not supported") }
                comparison = .notEqual
            } else {
                throw fail("expected = or != after label \"\(label)\"")
            }
            skipSpaces()
            guard current == "\"" else { throw fail("the value of label \"\(label)\" must be in double quotes") }
            index += 1
            var value = ""
            while let character = current, character != "\"" {
                index += 1
                if character == "\\" {
                    guard let escaped = current else { break }
                    index += 1
                    switch escaped {
                    case "n": value.append("\n")
                    case "\\", "\"": value.append(escaped)
                    default: throw fail("unknown escape \\\(escaped) in the value of label \"\(label)\"")
                    }
                } else {
                    value.append(character)
                }
            }
            guard current == "\"" else { throw fail("the value of label \"\(label)\" has no closing quote") }
            index += 1
            return LabelMatcher(label: label, comparison: comparison, value: value)
        }

        private mutating func identifier(allowColon: Bool) -> String {
            guard let first = current, Self.isNameStart(first, allowColon: allowColon) else { return "" }
            var word = ""
            while let character = current, Self.isNameCharacter(character, allowColon: allowColon) {
                word.append(character)
                index += 1
            }
            return word
        }

        static func isNameStart(_ character: Character, allowColon: Bool) -> Bool {
            character.isASCII && (character.isLetter || character == "_" || (allowColon && character == ":"))
        }

        static func isNameCharacter(_ character: Character, allowColon: Bool) -> Bool {
            isNameStart(character, allowColon: allowColon) || (character.isASCII && character.isNumber)
        }
    }
}

/// A `keep=` entry that does not parse: the entry and what is wrong with it.
public struct SelectorSyntaxError: Error, Sendable, Equatable {
    public var entry: String
    public var problem: String
}
