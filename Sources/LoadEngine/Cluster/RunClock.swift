import Atomics
import Foundation
import LoadResults
import NIOCore
import XMPPCore

/// This generator's session clock as other generators of a `--segment` run need to know it: its
/// origin on the wall clock (fixed at start) and, once the probing session's XEP-0202 answers came
/// in, the wall clock's offset against the server and its uncertainty. Shared by every event loop
/// without locks: one loop writes the estimate once, all read it with message stamps.
///
/// A run of one generator (one segment, no shared `--run-id`) keeps it silent (`stampClock` is nil), so its stamps are unchanged.
final class RunClock: Sendable {
    /// The session clock's origin on the wall clock, nanoseconds since 1970.
    let wallOrigin: Int64
    let isShared: Bool
    private let offset = ManagedAtomic<Int64>(0)
    private let uncertainty = ManagedAtomic<Int64>(-1)

    /// `clockOrigin` placed on the wall clock now; `shared`: the run has several generators.
    init(clockOrigin: NIODeadline, shared: Bool) {
        let wallNow = Int64(Date().timeIntervalSince1970 * 1e9)
        wallOrigin = wallNow - Int64(clamping: NIODeadline.now().uptimeNanoseconds) + Int64(clamping: clockOrigin.uptimeNanoseconds)
        isShared = shared
    }

    /// Records the estimate (the first one wins: every stamp of the run then carries the same).
    func estimated(_ estimate: ClockOffset) {
        let nanos = Int64((estimate.offsetMilliseconds * 1e6).rounded())
        let width = Int64((estimate.uncertaintyMilliseconds * 1e6).rounded(.up))
        guard uncertainty.load(ordering: .acquiring) < 0 else { return }
        offset.store(nanos, ordering: .releasing)
        uncertainty.store(max(width, 0), ordering: .releasing)
    }

    /// What stamps carry: nil for a run of one generator.
    var stampClock: MessageStamp.Clock? {
        guard isShared else { return nil }
        let width = uncertainty.load(ordering: .acquiring)
        guard width >= 0 else { return MessageStamp.Clock(wallOrigin: wallOrigin) }
        return MessageStamp.Clock(wallOrigin: wallOrigin, offset: offset.load(ordering: .acquiring), uncertainty: width)
    }
}
