/// The `${name}` variables every session defines, besides a profile's own `variables:` — the one
/// table that both the decoder (which checks every template's names) and the session (which renders
/// them) read.
public enum SessionVariable: String, Sendable, CaseIterable {
    /// The account number N of `userN`.
    case index
    /// The account's user name (`userN`).
    case user
    case domain
    /// The session's bare JID.
    case jid
    /// The bound resource.
    case resource
    /// The last message sequence number this session sent.
    case seq
    case runID = "run_id"
    /// The session's serial number in the run.
    case session
    /// The room and nick of the MUC room the session is in (empty outside one).
    case room
    case nick
    /// A fresh random 32-bit number (from the session's seeded generator).
    case random
    /// The request id of a `raw` iq step.
    case id
    /// Ring neighbours: the previous and next account number, over `ring_first...ring_last` when the
    /// profile sets them, else over the run's accounts.
    case prevIndex = "prev_index"
    case nextIndex = "next_index"
}
