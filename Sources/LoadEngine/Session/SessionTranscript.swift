// The last stanzas a virtual user exchanged, kept in a small ring while it is busy, for failure forensics.
import LoadResults
import SessionCore
import XMPPCore

/// The last `capacity` stanzas (and connection events) of one virtual user, oldest overwritten first,
/// each with its time on the session clock: what the user offers to its loop's `FailureForensics`
/// when a failure ends it.
///
/// Memory per idle session is the constraint (docs/ARCHITECTURE.md): a user allocates its transcript
/// on the first stanza and lets go of it when it rests (`SessionMachine.isResting(atLeast:)`: staying
/// online, or a think time of at least `restAfter`), so an idle session holds one nil reference. While
/// it exists, it holds at most `capacity` entries: the elements themselves (shared storage, not copies)
/// and no text; text is made, redacted and cut (`StanzaRedaction`) only for a session that failed and
/// whose kind its loop still wants. Loop-bound, like its user.
final class SessionTranscript {
    /// Entries kept: the stanzas per failed session that forensics keep.
    static let capacity = FailureForensics.stanzasPerSession
    /// A think time at least this long lets the transcript go (shorter ones keep it).
    static let restAfter = Duration.seconds(1)

    /// What an entry holds; rendered to text only when forensics want it.
    enum Content {
        case element(XMLElement)
        /// A stamped chat message as we sent it (made an element only for forensics).
        case message(StampedMessage)
        /// The server's stream header.
        indirect case serverStreamOpen(StreamHeader)
        /// Our stream header, to this domain.
        case ourStreamOpen(domain: String)
        case streamClose
        /// A profile's `raw` text as we sent it.
        case raw(String)
        /// Not a stanza: connected, TLS established, connection lost, timeout.
        case event(String)
    }

    struct Entry {
        let direction: ForensicStanza.Direction
        let at: SessionInstant
        let content: Content
    }

    private var entries: [Entry] = []
    /// Where the next entry goes once the ring is full (the oldest entry).
    private var next = 0

    init() { entries.reserveCapacity(Self.capacity) }

    func append(_ direction: ForensicStanza.Direction, _ content: Content, at instant: SessionInstant) {
        let entry = Entry(direction: direction, at: instant, content: content)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.capacity
        }
    }

    /// The entries, oldest first.
    var ordered: [Entry] { Array(entries[next...] + entries[..<next]) }

    var count: Int { entries.count }

    /// The entries as forensics keep them: redacted text, milliseconds since `start`.
    func stanzas(since start: SessionInstant) -> [ForensicStanza] {
        ordered.map { entry in
            ForensicStanza(
                direction: entry.direction, atMilliseconds: Double(entry.at.nanoseconds - start.nanoseconds) / 1e6,
                text: StanzaRedaction.text(of: entry.content))
        }
    }
}
