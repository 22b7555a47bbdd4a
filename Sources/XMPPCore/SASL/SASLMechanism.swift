import Foundation

/// The SASL mechanisms xmppload can use, strongest first.
///
/// Default choice: the strongest one the server offers, in the order SCRAM-SHA-512 > SCRAM-SHA-256 >
/// SCRAM-SHA-1 > PLAIN. ANONYMOUS is used only when forced. `-PLUS` variants are not used (no channel
/// binding), so offering only those means no common mechanism.
public enum SASLMechanism: String, Sendable, Hashable, CaseIterable {
    case scramSHA512 = "SCRAM-SHA-512"
    case scramSHA256 = "SCRAM-SHA-256"
    case scramSHA1 = "SCRAM-SHA-1"
    case plain = "PLAIN"
    case anonymous = "ANONYMOUS"

    /// The wire name.
    public var name: String { rawValue }

    /// Parses a wire name, case-insensitively.
    public init?(name: String) {
        self.init(rawValue: name.uppercased())
    }

    /// The SCRAM hash, for SCRAM mechanisms.
    public var scramAlgorithm: SCRAMAlgorithm? {
        switch self {
        case .scramSHA512: return .sha512
        case .scramSHA256: return .sha256
        case .scramSHA1: return .sha1
        case .plain, .anonymous: return nil
        }
    }

    /// Automatic choices, strongest first.
    public static let preference: [SASLMechanism] = [.scramSHA512, .scramSHA256, .scramSHA1, .plain]

    /// Whether `name` (as a server offers it) is a mechanism xmppload can use. `-PLUS` variants, DIGEST-MD5,
    /// CRAM-MD5, X-OAUTH2, EXTERNAL, GSSAPI… are not.
    public static func isSupported(_ name: String) -> Bool {
        SASLMechanism(name: name.trimmingCharacters(in: .whitespaces)) != nil
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
