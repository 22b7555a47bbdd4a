/// What a well-behaved client answers without being asked to, at any moment of a session.
///
/// Servers push stanzas whenever they like: XEP-0199 pings (Openfire pings idle clients and drops
/// those that don't answer), roster pushes, subscription requests, and — on some customised
/// deployments — arbitrary `iq`s even in the middle of SASL. A session never fails on these: it
/// classifies each one, answers it when the protocol asks for an answer, and goes on waiting for what
/// it needs. Pure function of the incoming stanza; no state.
public enum AutoResponder {
    /// What to do with a stanza nobody was waiting for.
    public enum Reaction: Sendable, Equatable {
        /// Answer a server ping with an empty result.
        case answerPing(XMLElement)
        /// Acknowledge a roster push (RFC 6121 §2.1.6) with an empty result.
        case acknowledgeRosterPush(XMLElement)
        /// Accept a subscription request: send `subscribed` back.
        case acceptSubscription(XMLElement)
        /// An iq get/set we don't support: answer `service-unavailable` as RFC 6120 §8.4 requires.
        case rejectRequest(XMLElement)
        /// Anything else: count it, no answer (results, errors, messages, presence, nonzas).
        case ignore
    }

    /// Classifies `stanza` (a depth-1 element of a `jabber:client` stream).
    public static func react(to stanza: XMLElement) -> Reaction {
        switch stanza.name {
        case "iq":
            let type = stanza.attribute("type")
            guard type == "get" || type == "set" else { return .ignore }
            if type == "get", stanza.firstChild(named: "ping", namespace: XMPPNamespace.ping) != nil {
                return .answerPing(Stanza.iqResult(answering: stanza))
            }
            if type == "set", stanza.firstChild(named: "query", namespace: XMPPNamespace.roster) != nil {
                return .acknowledgeRosterPush(Stanza.iqResult(answering: stanza))
            }
            return .rejectRequest(Stanza.iqError(answering: stanza))
        case "presence" where stanza.attribute("type") == "subscribe":
            guard let from = stanza.attribute("from") else { return .ignore }
            return .acceptSubscription(Stanza.presence(to: (try? JID(from))?.bare.description ?? from, type: "subscribed"))
        default:
            return .ignore
        }
    }
}

extension AutoResponder.Reaction {
    /// The stanza to send, if the reaction sends one.
    public var reply: XMLElement? {
        switch self {
        case .answerPing(let reply), .acknowledgeRosterPush(let reply), .acceptSubscription(let reply),
            .rejectRequest(let reply):
            return reply
        case .ignore:
            return nil
        }
    }
}
