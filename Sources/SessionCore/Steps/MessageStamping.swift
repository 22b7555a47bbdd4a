// Message stamping: the stamp a session's message carries out, and what a stamped arrival measures.
import LoadProfile
import LoadResults
import XMPPCore

/// Stamped messages, both ways. Out: the stamp (run, sender, sequence, intended and actual send
/// time, node, generator, clock) of a session's message. In: what an arriving message measures — a
/// latency (corrected from the sender's intended send, service from its actual send, on this
/// generator's clock), the ledger's receipt, the node matrix — or, for a message error, its notice.
///
/// Pure functions of their arguments; `MessagingFeature` keeps the sequence number (`${seq}`).
enum MessageStamping {
    /// The stamp of message `sequence` of the session `identity` (connected to `node`), sent `now`,
    /// due at `intended`.
    static func stamp(
        sequence: UInt32, identity: SessionIdentity, node: ServerNode?, settings: SessionSettings, now: SessionInstant,
        intended: SessionInstant, clock: MessageStamp.Clock?
    ) -> MessageStamp {
        var stamp = MessageStamp(
            runID: settings.runID, sender: UInt32(truncatingIfNeeded: identity.serial), sequence: sequence,
            sentNanos: now.stampNanoseconds, intendedNanos: min(intended, now).stampNanoseconds, node: node?.label)
        stamp.generator = settings.generatorKey  // generators sharing a --run-id without --segment
        stamp.clock = clock  // the generator's clock, in runs of several generators
        return stamp
    }

    /// What sending a stamped message of `type` to `to` counts: the ledger's send, or the room's fan-out
    /// (`occupants`: the room's occupants as this session saw them).
    static func sent(_ stamp: MessageStamp, type: String, to: String, occupants: Int) -> MetricEffect {
        type == "groupchat"
            ? .groupchatSent(room: to, occupants: occupants)
            : .messageSent(sender: stamp.senderKey, sequence: stamp.sequence)
    }

    /// Appends what the arriving `message` measures for the session `identity` (connected to `node`)
    /// at `now` to `actions` (as `record` actions; nothing for an unstamped message or another run's).
    /// Appends into the caller's buffer: no array per message.
    static func received(
        _ message: XMLElement, identity: SessionIdentity, node: ServerNode?, settings: SessionSettings, now: SessionInstant,
        clock ours: MessageStamp.Clock?, into actions: inout [SessionAction]
    ) {
        let type = message.attribute("type") ?? "normal"
        if type == "error" {
            let kind = SessionNotice.messageError(condition: Stanza.stanzaCondition(message)).kind
            actions.append(.record(.errorExample(kind: kind, text: SessionError.serverText(of: message))))
            actions.append(.record(.error(kind: kind)))
            return
        }
        guard let stamp = MessageStamp(in: message), stamp.runID == settings.runID else { return }
        var received = now.stampNanoseconds
        // A stamp of another generator: its send time placed on this generator's clock.
        if let theirs = stamp.clock, let ours {
            received = UInt64(clamping: Int64(clamping: received) &- ours.shift(from: theirs))
        }
        let service = received >= stamp.sentNanos ? received - stamp.sentNanos : 0
        let corrected = received >= stamp.intendedNanos ? received - stamp.intendedNanos : service
        if type == "groupchat" {
            let from = message.attribute("from") ?? ""
            actions.append(.record(.latency(settings.metrics.mucMessage, corrected: corrected, service: service)))
            actions.append(.record(.groupchatReceived(room: String(from.prefix { $0 != "/" }))))
            return
        }
        actions.append(.record(.latency(settings.metrics.message, corrected: corrected, service: service)))
        if let node, let senderNode = stamp.node {
            actions.append(.record(.nodeMessage(senderLabel: senderNode, receiver: node, nanoseconds: service)))
        }
        let receiver = UInt32(truncatingIfNeeded: identity.serial)
        actions.append(.record(.messageReceived(sender: stamp.senderKey, sequence: stamp.sequence, receiver: receiver)))
    }
}
