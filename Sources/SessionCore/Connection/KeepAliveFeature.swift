// Keep-alives while logged in (`keepalive:`): the feature's state and its decisions, as values.
import LoadProfile
import XMPPCore

/// Keep-alives while logged in: an XEP-0199 ping to the domain per interval, timed, or a single
/// space. A ping still unanswered at the next tick means the connection is dead: the session drops it
/// (`timeout-keepalive`), and its reconnect policy applies. A ping answered with an error (a server
/// without XEP-0199) is no round trip: it is counted (`pings_unsupported`) and the session keeps its
/// connection alive with whitespace from then on — for the rest of its life, reconnects included.
///
/// Pure state, with its own timer (`due`, the next tick) and its own ping ids (`ka<n>`): the machine
/// asks what a tick or a stanza means and performs the answer.
struct KeepAliveFeature: Equatable {
    /// The id and send time of our ping awaiting its answer.
    private(set) var pending: PendingPing?
    /// The server answered a ping with an error: whitespace from then on.
    private(set) var fallsBackToWhitespace = false
    /// When the next tick is due (nil: not logged in, or no `keepalive:`).
    private(set) var due: SessionInstant?
    /// Pings sent so far (the next one's id is `ka<pings + 1>`).
    private var pings: UInt32 = 0

    struct PendingPing: Equatable {
        /// The ping's number n (its iq id is `ka<n>`).
        let number: UInt32
        let sentAt: SessionInstant
    }

    /// What a tick does.
    enum Tick: Equatable {
        /// The previous ping is still unanswered: the connection is dead.
        case connectionDead
        /// Send this ping (its answer is awaited).
        case ping(XMLElement)
        /// Send one space.
        case whitespace
        /// Nothing now (the socket does not drain); the next tick is armed as usual.
        case skipped
    }

    /// Arms the next tick, one interval from `now` (nothing without `settings`).
    mutating func arm(_ settings: KeepAlive?, now: SessionInstant) {
        due = settings.map { now + $0.interval }
    }

    /// The tick came due at `now`; a ping that goes out has the iq id `ka<n>` (built only then). The
    /// caller arms the next tick unless the connection is dead.
    mutating func tick(_ settings: KeepAlive, domain: String, now: SessionInstant, writeBlocked: Bool) -> Tick {
        due = nil
        if pending != nil {
            pending = nil
            return .connectionDead
        }
        if writeBlocked { return .skipped }
        switch fallsBackToWhitespace ? .whitespace : settings.kind {
        case .ping:
            pings &+= 1
            pending = PendingPing(number: pings, sentAt: now)
            return .ping(Stanza.iq(type: "get", id: "ka\(pings)", to: domain, child: XMLElement("ping", namespace: XMPPNamespace.ping)))
        case .whitespace:
            return .whitespace
        }
    }

    /// What an answer to our ping means.
    enum Answer: Equatable {
        /// A result: one round trip of `keepalive.ping`, sent at `since`.
        case roundTrip(since: SessionInstant)
        /// The first error answer: the server lacks XEP-0199 (count it; whitespace from now on).
        case unsupported
        /// A later error answer (already counted).
        case answered
    }

    /// The meaning of `stanza` when it answers our pending ping (a result or an error: either way the
    /// server is there and the connection lives); nil when it does not.
    mutating func answer(_ stanza: XMLElement) -> Answer? {
        guard let awaited = pending, stanza.name == "iq", stanza.attribute("id") == "ka\(awaited.number)" else { return nil }
        let type = stanza.attribute("type")
        guard type == "result" || type == "error" else { return nil }
        pending = nil
        if type == "result" { return .roundTrip(since: awaited.sentAt) }
        if fallsBackToWhitespace { return .answered }
        fallsBackToWhitespace = true
        return .unsupported
    }

    /// The connection went away (or a new login began): no ping is awaited, no tick is armed.
    mutating func forget() {
        pending = nil
        due = nil
    }
}
