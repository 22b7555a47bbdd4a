import LoadResults
import XMPPCore

/// The kind of a depth-1 element, for the stanzas-in/out counters.
public enum StanzaKind: Sendable {
    case message, presence, iq, other

    public static func of(_ element: XMLElement) -> StanzaKind {
        switch element.name {
        case "message": return .message
        case "presence": return .presence
        case "iq": return .iq
        default: return .other
        }
    }

    public var inboundCounter: Counter {
        switch self {
        case .message: return .stanzasInMessage
        case .presence: return .stanzasInPresence
        case .iq: return .stanzasInIQ
        case .other: return .stanzasInOther
        }
    }

    public var outboundCounter: Counter {
        switch self {
        case .message: return .stanzasOutMessage
        case .presence: return .stanzasOutPresence
        case .iq: return .stanzasOutIQ
        case .other: return .stanzasOutOther
        }
    }
}
