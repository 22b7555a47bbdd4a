// forensics.json: the failed sessions' last stanzas per error kind, with the bounds they were kept within.

/// `forensics.json`: `FailureForensics` with the bounds it was kept within, so a reader knows that
/// three sessions of a kind are "the first three", not "all".
///
/// ```json
/// {"bounds": {"kinds": 32, "sessions_per_kind": 3, "stanzas_per_session": 8, "stanza_bytes": 512},
///  "kinds": {"sasl-not-authorized": [{"session": 0, "account": "user1", "phase": "sasl", "failed_at_s": 0.41,
///            "detail": "…", "stanzas": [{"direction": "out", "at_ms": 12.1, "text": "<auth …>[redacted]</auth>"}, …]}]}}
/// ```
public struct FailureForensicsFile: Sendable, Equatable, Codable {
    public struct Bounds: Sendable, Equatable, Codable {
        public var kinds = FailureForensics.maxKinds
        public var sessionsPerKind = FailureForensics.sessionsPerKind
        public var stanzasPerSession = FailureForensics.stanzasPerSession
        public var stanzaBytes = FailureForensics.maxStanzaBytes

        enum CodingKeys: String, CodingKey {
            case kinds
            case sessionsPerKind = "sessions_per_kind"
            case stanzasPerSession = "stanzas_per_session"
            case stanzaBytes = "stanza_bytes"
        }
    }

    public var bounds = Bounds()
    public var kinds: FailureForensics

    public init(_ forensics: FailureForensics) { kinds = forensics }
}
