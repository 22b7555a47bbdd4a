import LoadResults
import XMPPCore

/// The kind of a depth-1 element, for the stanzas-in/out counters.
enum StanzaKind {
    case message, presence, iq, other

    static func of(_ element: XMLElement) -> StanzaKind {
        switch element.name {
        case "message": return .message
        case "presence": return .presence
        case "iq": return .iq
        default: return .other
        }
    }

    var inboundCounter: Counter {
        switch self {
        case .message: return .stanzasInMessage
        case .presence: return .stanzasInPresence
        case .iq: return .stanzasInIQ
        case .other: return .stanzasInOther
        }
    }

    var outboundCounter: Counter {
        switch self {
        case .message: return .stanzasOutMessage
        case .presence: return .stanzasOutPresence
        case .iq: return .stanzasOutIQ
        case .other: return .stanzasOutOther
        }
    }
}
