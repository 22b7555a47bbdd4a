// The sender pattern of a `wait` step: `*` wildcards, everything else literal.

/// A `wait` step's sender pattern: `*` matches any run of characters, everything else literally.
public struct GlobPattern: Sendable, Equatable {
    private let parts: [Substring]

    public init(_ pattern: String) {
        parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
    }

    public func matches(_ text: String) -> Bool {
        if parts.count == 1 { return text == parts[0] }
        var rest = Substring(text)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts[parts.count - 1])
    }
}
