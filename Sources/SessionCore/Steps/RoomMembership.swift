// A session's MUC room (XEP-0045): joining it, what answers a join, its occupants, leaving it.
import XMPPCore

/// The MUC room a session is in or joining: its JID, our nick, the occupants the room announced (for
/// the fan-out's expected receipts) and the join retries of a room still locked by its creator.
/// Boxed (one pointer in `MUCFeature`) because most profiles never join a room.
///
/// It builds the stanzas of the `muc_*` steps and says what an arriving stanza means for a join in
/// flight; the machine sends and times.
final class RoomMembership {
    let jid: String
    var nick: String
    var occupants: Set<String> = []
    /// Joins retried because the room was still locked (XEP-0045 §10.1), at most `maxJoinRetries`.
    private(set) var joinRetries = 0
    /// When the next join of a locked room goes out (nil: none waiting).
    var retryAt: SessionInstant?
    /// A locked room is asked again after this long, up to `maxJoinRetries` times (~5 s in all).
    static let joinRetryDelay = Duration.milliseconds(500)
    static let maxJoinRetries = 10
    /// The id of the instant-room configuration a creator sends to unlock its new room.
    static let unlockID = "muc-unlock"

    /// `room` is a room name on `service` or a full room JID (it contains `@`).
    init(room: String, service: String, nick: String) {
        self.jid = room.contains("@") ? room : "\(room)@\(service)"
        self.nick = nick
    }

    /// The join presence, asking for at most `history` stanzas of history when given.
    func joinPresence(history: Int? = nil) -> XMLElement {
        var x = XMLElement("x", namespace: XMPPNamespace.muc)
        if let history {
            x.children.append(
                .element(XMLElement("history", namespace: XMPPNamespace.muc, attributes: [XMLAttribute("maxstanzas", String(history))])))
        }
        return Stanza.presence(to: "\(jid)/\(nick)", extra: [x])
    }

    /// The presence that changes our nick to `nick` (answered like a join).
    func changeNick(to nick: String) -> XMLElement {
        self.nick = nick
        return Stanza.presence(to: "\(jid)/\(nick)")
    }

    /// The presence that leaves the room.
    func leavePresence() -> XMLElement { Stanza.presence(to: "\(jid)/\(nick)", type: "unavailable") }

    /// What a stanza means for a join (or nick change) in flight.
    enum JoinAnswer: Equatable {
        /// We are in: the step completes.
        case joined
        /// We created the room: send this instant-room configuration; its result completes the join.
        case unlock(XMLElement)
        /// The room is still locked by its creator: join again after `joinRetryDelay`.
        case retryLater
        /// The join (or the configuration) was refused.
        case failed(SessionError)
    }

    /// The meaning of `stanza` for the join in flight; nil when it is not an answer to it.
    func joinAnswer(_ stanza: XMLElement) -> JoinAnswer? {
        if stanza.name == "iq", stanza.attribute("id") == Self.unlockID {
            return stanza.attribute("type") == "result" ? .joined : .failed(.mucConfigureError(condition: Stanza.stanzaCondition(stanza)))
        }
        guard stanza.name == "presence", let from = stanza.attribute("from"), (try? JID(from))?.bare.description == jid else {
            return nil
        }
        if stanza.attribute("type") == "error" {
            let condition = Stanza.stanzaCondition(stanza)
            if condition == "item-not-found", joinRetries < Self.maxJoinRetries {
                joinRetries += 1
                return .retryLater
            }
            return .failed(.mucError(condition: condition))
        }
        let codes = Self.statusCodes(stanza)
        // Self-presence (XEP-0045 §7.2.2): status 110, or — from a service that predates status 110 —
        // the presence of our own nick, which the room sends only once we are in.
        guard codes.contains("110") || from == "\(jid)/\(nick)" else { return nil }
        joinRetries = 0
        guard codes.contains("201") else { return .joined }
        // We created the room: accept the default configuration (instant room) to unlock it.
        let form = XMLElement("x", namespace: XMPPNamespace.dataForms, attributes: [XMLAttribute("type", "submit")])
        let query = XMLElement("query", namespace: XMPPNamespace.mucOwner, children: [.element(form)])
        return .unlock(Stanza.iq(type: "set", id: Self.unlockID, to: jid, child: query))
    }

    /// Keeps the occupant list as the room announces it (presences from `<room>/<nick>`).
    func observe(_ stanza: XMLElement) {
        guard stanza.name == "presence", let from = stanza.attribute("from"), from.hasPrefix(jid + "/") else { return }
        let nick = String(from.dropFirst(jid.count + 1))
        switch stanza.attribute("type") {
        case "unavailable": occupants.remove(nick)
        case "error": break
        default: occupants.insert(nick)
        }
    }

    private static func statusCodes(_ presence: XMLElement) -> [String] {
        guard let x = presence.firstChild(named: "x", namespace: XMPPNamespace.mucUser) else { return [] }
        return x.children(named: "status", namespace: XMPPNamespace.mucUser).compactMap { $0.attribute("code") }
    }
}

extension Stanza {
    /// The defined condition of a stanza error (RFC 6120 §8.3) in `stanza`.
    static func stanzaCondition(_ stanza: XMLElement) -> String {
        errorCondition(of: stanza, conditionNamespace: XMPPNamespace.stanzas)
    }
}
