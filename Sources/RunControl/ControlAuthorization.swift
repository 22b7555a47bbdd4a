/// Whether one control-port request carries the run's token: the decision, as a pure value of the
/// request's `Authorization` header and the token, so it is tested with a table.
///
/// Only `Authorization: Bearer TOKEN` (RFC 6750 §2.1; the scheme is case-insensitive, one or more
/// spaces after it) is accepted, compared in constant time (`ControlToken.matches`). Every other
/// request is refused with 401, whatever its path or method. The reasons never quote the header.
public enum ControlAuthorization: Sendable, Equatable {
    case allowed
    case refused(Reason)

    /// Why a request was refused (for the log line and the 401's body; never the presented value).
    public enum Reason: String, Sendable, Equatable {
        case missing = "no Authorization header"
        case notBearer = "the Authorization header is not `Bearer TOKEN`"
        case wrongToken = "wrong token"
    }

    /// The decision for a request whose `Authorization` header is `header` (nil: absent).
    public static func decide(header: String?, token: ControlToken) -> ControlAuthorization {
        guard let header else { return .refused(.missing) }
        let trimmed = header.drop { $0 == " " || $0 == "\t" }
        guard trimmed.count > 7, trimmed.prefix(6).lowercased() == "bearer", trimmed.dropFirst(6).first == " " else {
            return .refused(.notBearer)
        }
        let presented = String(trimmed.dropFirst(6).drop { $0 == " " }).trimmingTrailingSpaces
        guard !presented.isEmpty else { return .refused(.notBearer) }
        return token.matches(presented) ? .allowed : .refused(.wrongToken)
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
