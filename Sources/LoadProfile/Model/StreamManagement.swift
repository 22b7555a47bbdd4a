/// A profile's XEP-0198 stream management (`stream_management:`): after login the session enables it,
/// answers the server's ack requests, asks for acks every `requestEvery` stanzas it sends and keeps
/// what is unacknowledged; when `resume` is on and the server granted it, a dropped connection is
/// resumed first (at the server's `location` when it gave one), and a fresh login follows only when
/// the server refuses (`resume_failed`; stanzas still unacknowledged then count as lost).
///
/// Invariant: `requestEvery ≥ 1`.
public struct StreamManagement: Sendable, Equatable {
    /// Ask the server to keep the session for resumption, and resume after a drop.
    public var resume: Bool
    /// Send `<r/>` after this many stanzas (1: after each).
    public var requestEvery: Int

    public init(resume: Bool = true, requestEvery: Int = 5) {
        self.resume = resume
        self.requestEvery = requestEvery
    }
}
