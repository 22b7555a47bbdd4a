// The value of each `${name}` session variable for one session.
import LoadProfile

extension SessionVariable {
    /// This variable's value for the session `identity` now: its bound `resource`, its last message
    /// `sequence`, its `room` and `nick` there; `variables` are the profile's own (`id` and the ring's
    /// bounds); `${random}` draws from the program's `generator`.
    func value(
        identity: SessionIdentity, settings: SessionSettings, resource: String, sequence: UInt32, room: String?, nick: String?,
        variables: [String: String], generator: inout SeededGenerator
    ) -> String? {
        switch self {
        case .index: return String(identity.accountNumber)
        case .user: return identity.username
        case .domain: return settings.domain
        case .jid: return identity.bareJID
        case .resource: return resource
        case .seq: return String(sequence)
        case .runID: return settings.runID
        case .session: return String(identity.serial)
        case .room: return room
        case .nick: return nick
        case .random: return String(UInt32.random(in: 0...UInt32.max, using: &generator))
        case .id: return variables[rawValue]
        case .prevIndex, .nextIndex:
            // Neighbours on a ring: the profile's ring_first...ring_last when set, else the whole run's
            // accounts (every generator of a --segment run).
            let first = variables["ring_first"].flatMap(Int.init) ?? settings.runAccounts.lowerBound
            let last = variables["ring_last"].flatMap(Int.init) ?? settings.runAccounts.upperBound
            let count = max(last - first + 1, 1)
            let step = self == .nextIndex ? 1 : count - 1
            return String(first + (identity.accountNumber - first + step) % count)
        }
    }
}
