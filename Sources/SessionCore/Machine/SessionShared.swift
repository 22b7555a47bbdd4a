// What every feature of a session reads while it handles one event, and where it puts what it does.
import LoadProfile
import LoadResults
import XMPPCore

/// What every feature of one session may read while it handles an event — who the session is, its
/// compiled profile, the run's settings, the loop it asks things of, the event's instant — and the
/// one place every feature writes to: the event's actions (`SessionAction`, I/O and effects, in
/// order). No feature keeps state here: each feature owns its own (`SessionMachine` lists them).
///
/// Invariants: `identity`, `script`, `settings` and `host` never change; `now` is set by the machine
/// once per event; `actions` is the caller's buffer while an event is handled and is emptied (handed
/// back) between events.
struct SessionShared {
    let identity: SessionIdentity
    let script: SessionScript
    let settings: SessionSettings
    unowned let host: any SessionHost
    /// The event being handled happened at this instant.
    var now: SessionInstant
    /// Actions produced while handling the current event.
    var actions: [SessionAction] = []

    mutating func record(_ effect: MetricEffect) { actions.append(.record(effect)) }

    mutating func count(_ counter: Counter, by amount: UInt64 = 1) { actions.append(.record(.count(counter, by: amount))) }

    mutating func count(_ counter: CounterID, by amount: UInt64 = 1) { actions.append(.record(.countRegistered(counter, by: amount))) }

    /// Counts `error` (also for `node`) and keeps its detail as its kind's example.
    mutating func recordError(_ error: SessionError, node: ServerNode?) {
        record(.errorExample(kind: error.kind, text: error.detail))
        record(.error(kind: error.kind, node: node))
    }

    /// Records `metric` from `intended` (corrected) and `actual` (service) to now; also for `node`.
    mutating func recordLatency(_ metric: MetricID, from intended: SessionInstant, serviceFrom actual: SessionInstant, node: ServerNode? = nil) {
        record(.latency(metric, corrected: now.nanoseconds(since: intended), service: now.nanoseconds(since: actual), node: node))
    }

    /// Sends a stanza, counted by kind. (With stream management on, the machine queues what was sent
    /// for acks once the event was handled.)
    mutating func send(_ element: XMLElement) {
        count(StanzaKind.of(element).outboundCounter)
        actions.append(.send(element))
    }

    /// Sends a stamped chat message, written straight to bytes (as an element while stream management
    /// is on: the machine turns it into one, for the resend queue).
    mutating func send(_ message: StampedMessage) {
        count(StanzaKind.message.outboundCounter)
        actions.append(.sendMessage(message))
    }
}
