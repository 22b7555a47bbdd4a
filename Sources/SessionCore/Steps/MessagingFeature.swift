// Messaging as a session feature: message steps out, stamped messages in.
import LoadProfile
import LoadResults
import XMPPCore

/// One-to-one messages: the `message` step sends a stamped message (`MessageStamping`) to its target
/// — a random online session, a JID, the next account, ourselves — and completes at once (a message's
/// latency is measured by its receiver); an arriving stamped message of this run is measured here
/// (latency, the ledger's receipt, the node matrix), a message error is counted. The state is the
/// sequence number of our last message (`${seq}`).
struct MessagingFeature {
    /// Our last message's sequence number.
    private(set) var sequence: UInt32 = 0

    mutating func start(
        _ action: MessageAction, intended: SessionInstant, boundJID: String?, node: ServerNode?, tools: inout StepTools,
        _ s: inout SessionShared
    ) -> StepOutcome {
        guard let to = target(action.to, boundJID: boundJID, tools: &tools, s) else {
            s.record(.error(kind: SessionNotice.noOnlineTarget.kind))
            return .completed(measured: false)
        }
        let body = Self.text(of: action.body, tools: &tools, s)
        send(to: to, type: action.type.rawValue, body: body, intended: intended, node: node, occupants: 0, &s)
        return .completed(measured: false)
    }

    /// Sends a message carrying our stamp (also a room's groupchat: `occupants` as we saw them).
    mutating func send(
        to: String, type: String, body: String, intended: SessionInstant, node: ServerNode?, occupants: Int, _ s: inout SessionShared
    ) {
        sequence &+= 1
        let stamp = MessageStamping.stamp(
            sequence: sequence, identity: s.identity, node: node, settings: s.settings, now: s.now, intended: intended,
            clock: s.host.stampClock)
        s.send(StampedMessage(to: to, type: type, body: body, stamp: stamp))
        s.record(MessageStamping.sent(stamp, type: type, to: to, occupants: occupants))
    }

    /// What an arriving message measures (nothing for an unstamped one or another run's).
    func received(_ message: XMLElement, node: ServerNode?, _ s: inout SessionShared) {
        MessageStamping.received(
            message, identity: s.identity, node: node, settings: s.settings, now: s.now, clock: s.host.stampClock, into: &s.actions)
    }

    /// The text of a message body: the loop's cached filler of that size, or the rendered template.
    static func text(of body: MessageBody, tools: inout StepTools, _ s: SessionShared) -> String {
        switch body {
        case .size(let size): return s.host.fillerBody(size: size)
        case .literal(let template): return tools.render(template, s)
        }
    }

    private func target(_ target: MessageTarget, boundJID: String?, tools: inout StepTools, _ s: SessionShared) -> String? {
        switch target {
        case .randomOnline:
            guard let slot = s.host.randomOnlineSlot(excluding: s.identity.slot, using: &tools.generator) else { return nil }
            return s.settings.bareJID(slot: slot)
        case .jid(let template): return tools.render(template, s)
        case .next: return s.settings.bareJID(slot: s.settings.nextSlot(after: s.identity.accountNumber))
        case .selfJID: return boundJID ?? s.identity.bareJID
        }
    }
}
