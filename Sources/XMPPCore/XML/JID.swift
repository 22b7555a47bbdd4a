/// An XMPP address, `[local@]domain[/resource]` (RFC 7622).
///
/// Validation is deliberately light, enough for a load tool that builds its own addresses and reads
/// the server's: parts are split as RFC 7622 §3.2 says (resource after the first `/`, local part
/// before the first `@` of the rest), each present part must be 1…1023 UTF-8 bytes, the local part
/// must not contain `" & ' / : < > @`, whitespace or control characters, the domain no whitespace,
/// controls, `@` or `/`, the resource no control characters. The domain is ASCII-lowercased and a
/// trailing dot removed. No PRECIS/stringprep profile is applied (no Unicode case folding or
/// normalization), so two JIDs that differ only in non-ASCII case compare unequal.
public struct JID: Sendable, Hashable, CustomStringConvertible {
    /// The local part (account name), if any.
    public let local: String?
    /// The domain part; never empty.
    public let domain: String
    /// The resource part, if any.
    public let resource: String?

    /// Parses `local@domain/resource`, `domain/resource`, `local@domain` or `domain`.
    public init(_ string: String) throws(JIDError) {
        var rest = Substring(string)
        var resource: Substring?
        if let slash = rest.firstIndex(of: "/") {
            resource = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var local: Substring?
        if let at = rest.firstIndex(of: "@") {
            local = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        try self.init(local: local.map(String.init), domain: String(rest), resource: resource.map(String.init))
    }

    /// Builds a JID from its parts, validating each (see the type's documentation).
    public init(local: String?, domain: String, resource: String? = nil) throws(JIDError) {
        if let local {
            try Self.validate(local, as: .local) { character in
                character.isWhitespace || "\"&'/:<>@".contains(character)
            }
        }
        var domain = domain
        if domain.hasSuffix(".") {
            domain.removeLast()
        }
        try Self.validate(domain, as: .domain) { character in
            character.isWhitespace || character == "@" || character == "/"
        }
        if let resource {
            try Self.validate(resource, as: .resource) { _ in false }
        }
        self.local = local
        self.domain = Self.asciiLowercased(domain)
        self.resource = resource
    }

    /// This JID without its resource.
    public var bare: JID {
        resource == nil ? self : JID(validatedLocal: local, domain: domain, resource: nil)
    }

    /// Whether there is no resource part.
    public var isBare: Bool {
        resource == nil
    }

    /// This JID with `resource` replacing its resource part.
    public func withResource(_ resource: String) throws(JIDError) -> JID {
        try JID(local: local, domain: domain, resource: resource)
    }

    /// The JID as written on the wire: `local@domain/resource`.
    public var description: String {
        var text = ""
        if let local {
            text += local
            text += "@"
        }
        text += domain
        if let resource {
            text += "/"
            text += resource
        }
        return text
    }

    private init(validatedLocal local: String?, domain: String, resource: String?) {
        self.local = local
        self.domain = domain
        self.resource = resource
    }

    private static func validate(
        _ part: String, as kind: JIDError.Part, forbidden: (Character) -> Bool
    ) throws(JIDError) {
        if part.isEmpty {
            throw .empty(kind)
        }
        if part.utf8.count > 1023 {
            throw .tooLong(kind)
        }
        for character in part where forbidden(character) || isControl(character) {
            throw .forbiddenCharacter(kind, character)
        }
    }

    private static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private static func asciiLowercased(_ string: String) -> String {
        guard string.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            return string
        }
        let bytes = string.utf8.map { byte in
            byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
