import LoadProfile
import LoadResults
import XMPPCore

/// What a session's machine must *ask* of its event loop while it decides: the SCRAM key cache, whether
/// the run is stopping, cached message bodies, a random online target and the generator's stamp
/// clock. Everything the machine *does* (metrics, the online directory, gauges, facts learned) comes
/// back as `SessionAction` values instead. The engine's `LoopContext` is one; unit tests use a
/// plain class.
///
/// Every member is used on one thread (the loop's); nothing here needs a lock. Implementations must
/// not call back into the machine.
public protocol SessionHost: AnyObject {
    /// The loop's SCRAM key cache (one PBKDF2 per password, salt and iteration count).
    var keyCache: SCRAMKeyCache { get }
    /// True once the run's load phase ended: a session that reaches `stay_online` logs out at once.
    var isStopping: Bool { get }
    /// A message body of `size` bytes (cached per loop).
    func fillerBody(size: Int) -> String
    /// A random account slot that is online (available presence seen), other than `slot`.
    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int?
    /// This generator's clock for message stamps (nil: stamps carry none, as in a run of one
    /// generator).
    var stampClock: MessageStamp.Clock? { get }
    /// The endpoint a session whose connect to its try `attempt` failed with `failure` tries next
    /// within the same login: the next of its RFC 2782 order (`first`: its first choice, `arrival`:
    /// its arrival index); nil when it does not fall back (one endpoint, a failure that is not
    /// connect-level, every endpoint tried). The machine decides and counts; the host only knows the
    /// run's endpoint order.
    func fallbackEndpoint(after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int) -> Int?
    /// The node of endpoint `endpoint` (nil: the run has one endpoint).
    func node(ofEndpoint endpoint: Int) -> ServerNode?
}

extension SessionHost {
    public var stampClock: MessageStamp.Clock? { nil }
    public func fallbackEndpoint(after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int) -> Int? { nil }
    public func node(ofEndpoint endpoint: Int) -> ServerNode? { nil }
}

/// Where a session is in its life, as the gauges count it.
public enum SessionStage: Sendable, Equatable {
    /// Created, not yet connecting.
    case idle
    /// Connecting or logging in.
    case connecting
    /// Logged in (running steps or logging out).
    case online
    /// Over.
    case ended
}

/// Session gauges (a loop's, or a test host's): how many of its sessions are connecting (or logging in) and online,
/// moved by the sessions' `stageChanged` actions. Invariant: neither goes below zero when every move
/// leaves a stage the session was in.
public struct SessionGauges {
    public init() {}

    public private(set) var connecting = 0
    public private(set) var online = 0

    public mutating func moved(from old: SessionStage, to new: SessionStage) {
        switch old {
        case .connecting: connecting -= 1
        case .online: online -= 1
        case .idle, .ended: break
        }
        switch new {
        case .connecting: connecting += 1
        case .online: online += 1
        case .idle, .ended: break
        }
    }
}
