import Foundation

/// A string with `${name}` placeholders, parsed once and rendered per session.
///
/// Syntax: `${name}`; `${name/N}` and `${name%N}` apply integer division or remainder to a numeric
/// value (e.g. `room${index/50}` puts 50 consecutive accounts in one room); `$$` is a literal `$`.
/// Rendering is a walk over pre-split parts; unknown variables render as empty (but `check` reports
/// them, so a validated profile has none).
public struct Template: Sendable, Equatable, CustomStringConvertible {
    public enum Part: Sendable, Equatable {
        case literal(String)
        case variable(name: String, divide: Int?, modulo: Int?)
    }

    public let parts: [Part]
    public let source: String

    public init(literal: String) {
        parts = literal.isEmpty ? [] : [.literal(literal)]
        source = literal.replacingOccurrences(of: "$", with: "$$")
    }

    /// Parses `text`; throws a message (with the character offset) when a placeholder is malformed.
    public init(parsing text: String) throws(TemplateError) {
        source = text
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard character == "$" else {
                literal.append(character)
                index = text.index(after: index)
                continue
            }
            let next = text.index(after: index)
            if next < text.endIndex, text[next] == "$" {
                literal.append("$")
                index = text.index(after: next)
                continue
            }
            guard next < text.endIndex, text[next] == "{", let close = text[next...].firstIndex(of: "}") else {
                throw TemplateError(
                    message: "'$' must start '${name}' (write '$$' for a literal '$')", offset: text.distance(from: text.startIndex, to: index))
            }
            let body = String(text[text.index(after: next)..<close]).trimmingCharacters(in: .whitespaces)
            var name = body
            var divide: Int?
            var modulo: Int?
            if let slash = body.firstIndex(of: "/") {
                name = String(body[..<slash]).trimmingCharacters(in: .whitespaces)
                guard let n = Int(body[body.index(after: slash)...].trimmingCharacters(in: .whitespaces)), n > 0 else {
                    throw TemplateError(
                        message: "'${\(body)}': the divisor must be a positive integer", offset: text.distance(from: text.startIndex, to: index))
                }
                divide = n
            } else if let percent = body.firstIndex(of: "%") {
                name = String(body[..<percent]).trimmingCharacters(in: .whitespaces)
                guard let n = Int(body[body.index(after: percent)...].trimmingCharacters(in: .whitespaces)), n > 0 else {
                    throw TemplateError(
                        message: "'${\(body)}': the modulus must be a positive integer", offset: text.distance(from: text.startIndex, to: index))
                }
                modulo = n
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw TemplateError(message: "'${\(body)}' is not a variable name", offset: text.distance(from: text.startIndex, to: index))
            }
            if !literal.isEmpty {
                parts.append(.literal(literal))
                literal = ""
            }
            parts.append(.variable(name: name, divide: divide, modulo: modulo))
            index = text.index(after: close)
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    /// The variable names used.
    public var variables: [String] {
        parts.compactMap { if case .variable(let name, _, _) = $0 { return name } else { return nil } }
    }

    public func render(_ lookup: (String) -> String?) -> String {
        if parts.count == 1, case .literal(let text) = parts[0] { return text }
        var result = ""
        result.reserveCapacity(source.utf8.count + 16)
        for part in parts {
            switch part {
            case .literal(let text):
                result += text
            case .variable(let name, let divide, let modulo):
                let value = lookup(name) ?? ""
                if let divide, let number = Int(value) {
                    result += String(number / divide)
                } else if let modulo, let number = Int(value) {
                    result += String(number % modulo)
                } else {
                    result += value
                }
            }
        }
        return result
    }

    public var description: String { source }
}

/// A malformed `${…}` placeholder.
public struct TemplateError: Error, Sendable, Equatable {
    public let message: String
    /// Character offset of the offending `$` in the template text.
    public let offset: Int
}
