import Foundation

/// The SASL mechanisms xmppload can use, strongest first.
///
/// Default choice: the strongest one the server offers, in the order SCRAM-SHA-512 > SCRAM-SHA-256 >
/// SCRAM-SHA-1 > PLAIN. ANONYMOUS is used only when forced. The `-PLUS` variants (SCRAM with channel
/// binding) need channel-binding data from the connection's TLS layer: without it they are not
/// usable and `choose(offered:forced:)` never picks them (offering only those means no common
/// mechanism); with it, `LoginMachine` prefers them (`preferenceWithChannelBinding`, `MechanismChoice`).
public enum SASLMechanism: String, Sendable, Hashable, CaseIterable {
    case scramSHA512 = "SCRAM-SHA-512"
    case scramSHA256 = "SCRAM-SHA-256"
    case scramSHA1 = "SCRAM-SHA-1"
    case plain = "PLAIN"
    case anonymous = "ANONYMOUS"
    case scramSHA512Plus = "SCRAM-SHA-512-PLUS"
    case scramSHA256Plus = "SCRAM-SHA-256-PLUS"
    case scramSHA1Plus = "SCRAM-SHA-1-PLUS"

    /// The wire name.
    public var name: String { rawValue }

    /// Parses a wire name, case-insensitively.
    public init?(name: String) {
        self.init(rawValue: name.uppercased())
    }

    /// Parses a wire name as a server offers it: surrounding white space (what Foundation's
    /// `CharacterSet.whitespaces` holds: Unicode general category Zs, U+0009 and U+200B) dropped, then
    /// case-insensitively. The same result as `init?(name: name.trimmingCharacters(in: .whitespaces))`
    /// without Foundation, whose trimming built a character set through CoreFoundation on every call:
    /// ~2.5 % of a plain login's CPU, for the few names of one offer (issue 42).
    init?(offered name: String) {
        let scalars = name.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, Self.isWhitespace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, Self.isWhitespace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        self.init(name: start == scalars.startIndex && end == scalars.endIndex ? name : String(scalars[start..<end]))
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// The SCRAM hash, for SCRAM mechanisms.
    public var scramAlgorithm: SCRAMAlgorithm? {
        switch self {
        case .scramSHA512, .scramSHA512Plus: return .sha512
        case .scramSHA256, .scramSHA256Plus: return .sha256
        case .scramSHA1, .scramSHA1Plus: return .sha1
        case .plain, .anonymous: return nil
        }
    }

    /// Whether this is a `-PLUS` mechanism (SCRAM with channel binding).
    public var usesChannelBinding: Bool {
        switch self {
        case .scramSHA512Plus, .scramSHA256Plus, .scramSHA1Plus: return true
        case .scramSHA512, .scramSHA256, .scramSHA1, .plain, .anonymous: return false
        }
    }

    /// The `-PLUS` variant of a SCRAM mechanism (itself for a `-PLUS` one; nil for PLAIN, ANONYMOUS).
    public var withChannelBinding: SASLMechanism? {
        switch self {
        case .scramSHA512, .scramSHA512Plus: return .scramSHA512Plus
        case .scramSHA256, .scramSHA256Plus: return .scramSHA256Plus
        case .scramSHA1, .scramSHA1Plus: return .scramSHA1Plus
        case .plain, .anonymous: return nil
        }
    }

    /// Automatic choices without channel binding, strongest first.
    public static let preference: [SASLMechanism] = [.scramSHA512, .scramSHA256, .scramSHA1, .plain]

    /// Automatic choices when the connection can bind to its TLS channel, strongest first: any `-PLUS`
    /// before any mechanism without channel binding (binding the login to the connection protects
    /// more than a longer hash), then by hash.
    public static let preferenceWithChannelBinding: [SASLMechanism] =
        [.scramSHA512Plus, .scramSHA256Plus, .scramSHA1Plus] + preference

    /// Whether `name` (as a server offers it) is a mechanism xmppload can use without channel binding.
    /// `-PLUS` variants (see `isSupported(_:channelBinding:)`), DIGEST-MD5, CRAM-MD5, X-OAUTH2,
    /// EXTERNAL, GSSAPI… are not.
    public static func isSupported(_ name: String) -> Bool {
        isSupported(name, channelBinding: false)
    }

    /// Whether `name` is usable on a connection that has (`channelBinding`) or lacks channel-binding
    /// data: the `-PLUS` variants are usable only with it.
    public static func isSupported(_ name: String, channelBinding: Bool) -> Bool {
        guard let mechanism = SASLMechanism(offered: name) else { return false }
        return channelBinding || !mechanism.usesChannelBinding
    }

    /// The mechanism to use: `forced` if the server offers it, else the strongest offered one.
    public static func choose(offered: [String], forced: SASLMechanism?) -> SASLMechanism? {
        // Servers send upper-case names; compare byte-wise after dropping surrounding spaces.
        func normalized(_ name: String) -> Substring {
            let start = name.firstIndex { $0 != " " } ?? name.endIndex
            let end = name.lastIndex { $0 != " " }.map(name.index(after:)) ?? start
            return name[start..<max(start, end)]
        }
        let names = offered.map(normalized)
        func isOffered(_ mechanism: SASLMechanism) -> Bool {
            names.contains { $0 == mechanism.rawValue || $0.uppercased() == mechanism.rawValue }
        }
        if let forced { return isOffered(forced) ? forced : nil }
        return preference.first(where: isOffered)
    }
}
