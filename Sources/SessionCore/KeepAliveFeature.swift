// Keep-alives while logged in (`keepalive:`): the feature's state and its decisions, as values.
import LoadProfile
import XMPPCore

/// Keep-alives while logged in: an XEP-0199 ping to the domain per interval, timed, or a single
/// space. A ping still unanswered at the next tick means the connection is dead: the session drops it
/// (`timeout-keepalive`), and its reconnect policy applies. A ping answered with an error (a server
/// without XEP-0199) is no round trip: it is counted (`pings_unsupported`) and the session keeps its
/// connection alive with whitespace from then on — for the rest of its life, reconnects included.
///
/// Pure state: the machine asks what a tick or a stanza means and performs the answer.
struct KeepAliveFeature: Equatable {
    /// The id and send time of our ping awaiting its answer.
    private(set) var pending: PendingPing?
    /// The server answered a ping with an error: whitespace from then on.
    private(set) var fallsBackToWhitespace = false

    struct PendingPing: Equatable {
        let id: String
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

    /// The tick came due at `now`; a ping that goes out has the iq id `ka<request>` (built only then).
    mutating func tick(_ settings: KeepAlive, request: UInt32, domain: String, now: SessionInstant, writeBlocked: Bool) -> Tick {
        if pending != nil {
            pending = nil
            return .connectionDead
        }
        if writeBlocked { return .skipped }
        switch fallsBackToWhitespace ? .whitespace : settings.kind {
        case .ping:
            let id = "ka\(request)"
            pending = PendingPing(id: id, sentAt: now)
            return .ping(Stanza.iq(type: "get", id: id, to: domain, child: XMLElement("ping", namespace: XMPPNamespace.ping)))
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
        guard let awaited = pending, stanza.name == "iq", stanza.attribute("id") == awaited.id else { return nil }
        let type = stanza.attribute("type")
        guard type == "result" || type == "error" else { return nil }
        pending = nil
        if type == "result" { return .roundTrip(since: awaited.sentAt) }
        if fallsBackToWhitespace { return .answered }
        fallsBackToWhitespace = true
        return .unsupported
    }

    /// The connection went away (or a new login began): no ping is awaited any more.
    mutating func forgetPending() { pending = nil }
}
