// The first few failed sessions of each error kind, with their last stanzas: why sessions failed.

/// The first failed sessions of each error kind with the last stanzas each exchanged (redacted by the
/// engine before they get here): what `forensics.json` and report.html's "Why did these fail" show.
///
/// A plain, bounded value: at most `maxKinds` kinds, `sessionsPerKind` sessions per kind, each with
/// at most `stanzasPerSession` stanzas of at most `maxStanzaBytes` UTF-8 bytes (longer ones are cut
/// and marked `truncated`), so the whole value stays under ~400 KiB whatever the run. "First" means
/// the earliest `failedAtSeconds` (ties broken by session, then account): `merge` keeps the first
/// `sessionsPerKind` of the union per kind and the `maxKinds` kinds whose first failure came first,
/// so merging (loops at interval ends, generators in `report`) is associative and commutative.
/// Each loop's `MetricsRecorder` offers only its own first sessions per kind (`wants(kind:)`).
public struct FailureForensics: Sendable, Equatable, Codable {
    /// Failed sessions kept per error kind.
    public static let sessionsPerKind = 3
    /// Error kinds kept.
    public static let maxKinds = 32
    /// Stanzas (and connection events) kept per session: the last ones before it failed.
    public static let stanzasPerSession = 8
    /// Longest stanza text kept, in UTF-8 bytes (before the `…` that marks a cut).
    public static let maxStanzaBytes = 512

    /// Error kind → its first failed sessions, earliest first.
    public private(set) var kinds: [String: [FailedSession]]

    public init() { kinds = [:] }

    public var isEmpty: Bool { kinds.isEmpty }

    /// Number of sessions held, over all kinds.
    public var sessionCount: Int { kinds.values.reduce(0) { $0 + $1.count } }

    /// True when a session failing with `kind` would be kept if it came after those held (a new kind
    /// while under `maxKinds`, or a kind with fewer than `sessionsPerKind`): the engine builds a
    /// session's forensics only then.
    public func wants(kind: String) -> Bool {
        if let held = kinds[kind] { return held.count < Self.sessionsPerKind }
        return kinds.count < Self.maxKinds
    }

    /// Adds `session` (bounded first: stanzas, their lengths); returns whether it is kept.
    @discardableResult
    public mutating func offer(_ session: FailedSession) -> Bool {
        var one = FailureForensics()
        one.kinds[session.kind] = [session.bounded()]
        merge(one)
        return kinds[session.kind]?.contains(session.bounded()) ?? false
    }

    /// Adds `other`'s sessions, keeping the first ones per kind and the kinds that failed first.
    public mutating func merge(_ other: FailureForensics) {
        guard !other.kinds.isEmpty else { return }
        var merged = kinds
        for (kind, sessions) in other.kinds {
            let union = (merged[kind] ?? []) + sessions
            var seen: [FailedSession] = []
            for session in union.sorted(by: FailedSession.isEarlier) where !seen.contains(session) {
                seen.append(session)
                if seen.count == Self.sessionsPerKind { break }
            }
            merged[kind] = seen
        }
        if merged.count > Self.maxKinds {
            let kept = merged.sorted { lhs, rhs in
                let (l, r) = (lhs.value[0], rhs.value[0])
                if l.failedAtSeconds != r.failedAtSeconds { return l.failedAtSeconds < r.failedAtSeconds }
                return lhs.key < rhs.key
            }.prefix(Self.maxKinds)
            merged = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
        kinds = merged
    }

    /// `earlier` and `later` merged (nil when both are nil or empty).
    public static func merge(_ earlier: FailureForensics?, _ later: FailureForensics?) -> FailureForensics? {
        guard let later, !later.isEmpty else { return earlier }
        var merged = earlier ?? FailureForensics()
        merged.merge(later)
        return merged
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let decoded = try container.decode([String: [FailedSession]].self)
        var bounded = FailureForensics()
        for (kind, sessions) in decoded {
            var part = FailureForensics()
            part.kinds[kind] = sessions.map { $0.bounded() }
            bounded.merge(part)
        }
        self = bounded
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(kinds)
    }
}

/// One failed session as forensics keep it: who, where, in which phase, and its last stanzas.
public struct FailedSession: Sendable, Equatable, Codable {
    /// The error kind it ended with (`errors` in summary.json).
    public var kind: String
    /// The session's serial number in its generator's run.
    public var session: Int
    /// The account's local part (`user17`).
    public var account: String
    /// The server endpoint (`host:port`) of a run with several; nil with one.
    public var node: String?
    /// The login phase it failed in (`connect` … `resume`); nil when it failed after logging in.
    public var phase: String?
    /// The error's own description (the server's text, the phase it was stuck in); never a password.
    public var detail: String?
    /// When it failed, in seconds since the run's start.
    public var failedAtSeconds: Double
    /// Its last stanzas and connection events, oldest first.
    public var stanzas: [ForensicStanza]

    enum CodingKeys: String, CodingKey {
        case kind, session, account, node, phase, detail, stanzas
        case failedAtSeconds = "failed_at_s"
    }

    public init(
        kind: String, session: Int, account: String, node: String? = nil, phase: String? = nil, detail: String? = nil,
        failedAtSeconds: Double, stanzas: [ForensicStanza]
    ) {
        self.kind = kind
        self.session = session
        self.account = account
        self.node = node
        self.phase = phase
        self.detail = detail
        self.failedAtSeconds = failedAtSeconds
        self.stanzas = stanzas
    }

    /// The same session within the bounds: its last `stanzasPerSession` stanzas, each cut to
    /// `maxStanzaBytes`, the detail to `ErrorExamples.maxCharacters`.
    func bounded() -> FailedSession {
        var copy = self
        copy.stanzas = stanzas.suffix(FailureForensics.stanzasPerSession).map { $0.bounded() }
        copy.detail = detail.flatMap(ErrorExamples.sanitized)
        return copy
    }

    static func isEarlier(_ lhs: FailedSession, _ rhs: FailedSession) -> Bool {
        if lhs.failedAtSeconds != rhs.failedAtSeconds { return lhs.failedAtSeconds < rhs.failedAtSeconds }
        if lhs.session != rhs.session { return lhs.session < rhs.session }
        return lhs.account < rhs.account
    }
}

/// One stanza (or connection event) of a failed session's transcript.
public struct ForensicStanza: Sendable, Equatable, Codable {
    public enum Direction: String, Sendable, Codable {
        /// From the server.
        case received = "in"
        /// From us.
        case sent = "out"
        /// Not a stanza: connected, TLS established, connection lost, a timeout fired.
        case event
    }

    public var direction: Direction
    /// Milliseconds since the session's start (its arrival's intended start).
    public var atMilliseconds: Double
    /// The stanza as XML, credentials and SASL payloads redacted; or the event's description.
    public var text: String
    /// True when `text` was cut at `FailureForensics.maxStanzaBytes`.
    public var truncated: Bool?

    enum CodingKeys: String, CodingKey {
        case direction, text, truncated
        case atMilliseconds = "at_ms"
    }

    public init(direction: Direction, atMilliseconds: Double, text: String, truncated: Bool? = nil) {
        self.direction = direction
        self.atMilliseconds = atMilliseconds
        self.text = text
        self.truncated = truncated
    }

    /// Cut to at most `maxStanzaBytes` UTF-8 bytes at a character boundary, the `…` that marks the cut
    /// included (so bounding twice changes nothing), and marked `truncated`.
    func bounded() -> ForensicStanza {
        guard text.utf8.count > FailureForensics.maxStanzaBytes else { return self }
        let room = FailureForensics.maxStanzaBytes - "…".utf8.count
        var cut = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > room { break }
            cut.append(character)
            bytes += size
        }
        return ForensicStanza(direction: direction, atMilliseconds: atMilliseconds, text: cut + "…", truncated: true)
    }
}
