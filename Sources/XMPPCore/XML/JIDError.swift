/// Why a string is not a valid JID. `kind` is stable, for counters: always `jid-invalid` for now;
/// `description` names the part and the problem.
public struct JIDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The three parts of a JID, for messages.
    enum Part: String, Sendable {
        case local = "localpart"
        case domain = "domainpart"
        case resource = "resourcepart"
    }

    private enum Reason: Sendable, Equatable {
        case empty(Part)
        case tooLong(Part)
        case forbiddenCharacter(Part, Character)
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    static func empty(_ part: Part) -> JIDError { JIDError(.empty(part)) }
    static func tooLong(_ part: Part) -> JIDError { JIDError(.tooLong(part)) }
    static func forbiddenCharacter(_ part: Part, _ character: Character) -> JIDError {
        JIDError(.forbiddenCharacter(part, character))
    }

    /// Stable identifier for metrics.
    public var kind: String { "jid-invalid" }

    public var description: String {
        switch reason {
        case .empty(let part): "invalid JID: empty \(part.rawValue)"
        case .tooLong(let part): "invalid JID: \(part.rawValue) longer than 1023 bytes"
        case .forbiddenCharacter(let part, let character):
            "invalid JID: \(part.rawValue) contains forbidden character U+\(String(character.unicodeScalars.first!.value, radix: 16, uppercase: true))"
        }
    }
}
