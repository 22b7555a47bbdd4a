import NIOCore

/// One event loop's session timeouts (login, step, logout): a `DeadlineHeap` served by a single NIO
/// scheduled callback (`LoopCallback`) armed at the earliest deadline.
///
/// Why not one `scheduleTask` per timeout: NIO allocates a promise, a task and a closure per call,
/// may re-arm its timerfd, and cancelling searches its task queue linearly, so with thousands of
/// sessions each arming and cancelling three or four timeouts per login, timers cost more than the
/// XMPP work. Here arming is a push into an array heap; cancelling is free: each entry carries the
/// session's serial and timeout generation, and an entry whose session ended or re-armed since is
/// dropped when it comes due. Stale entries live until their deadline (at most rate × longest
/// timeout entries, 24 bytes each).
///
/// Deadlines are rounded up to `tick` (50 ms): a timeout fires up to one tick after its deadline, never
/// before, and the loop wakes at most once per tick for all the entries that came due — stale ones
/// included, which is what keeps lazy cancellation from costing a wake-up per cancelled timeout.
///
/// Loop-bound: call everything on `eventLoop`. Deadlines are `NIODeadline` nanoseconds (monotonic).
final class SessionTimeouts: NIOScheduledCallbackHandler {
    struct Token: Equatable {
        let serial: Int
        let generation: UInt32
    }

    /// Granularity of deadlines, nanoseconds.
    static let tick: Int64 = 50_000_000

    private let eventLoop: any EventLoop
    private var heap = DeadlineHeap<Token>()
    private var armed = LoopCallback()
    /// Called on the loop for every entry that came due; the owner checks the token is current.
    var onExpire: (Token) -> Void = { _ in }

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Entries held, stale ones included (for tests and health).
    var pendingCount: Int { heap.count }

    /// Arms `token` to come due `amount` from the loop's now (`EventLoop.now`, so an
    /// `EmbeddedEventLoop`'s virtual clock drives it in tests).
    func arm(_ token: Token, after amount: TimeAmount) {
        let sum = Int64(clamping: eventLoop.now.uptimeNanoseconds).addingReportingOverflow(max(amount.nanoseconds, 0))
        arm(token, atNanoseconds: sum.overflow ? Int64.max - Self.tick : sum.partialValue)
    }

    /// Arms `token` to come due at `deadline` (not before; up to one tick after).
    func arm(_ token: Token, at deadline: NIODeadline) {
        arm(token, atNanoseconds: min(Int64(clamping: deadline.uptimeNanoseconds), Int64.max - Self.tick))
    }

    private func arm(_ token: Token, atNanoseconds exact: Int64) {
        let nanos = (exact / Self.tick + (exact % Self.tick == 0 ? 0 : 1)) * Self.tick
        heap.push(deadline: nanos, payload: token)
        rearmIfEarlier(than: nanos)
    }

    /// Stops the loop task (the run is over); pending entries are dropped.
    func cancelAll() {
        armed.cancel()
        heap = DeadlineHeap()
    }

    private func rearmIfEarlier(than nanos: Int64) {
        let deadline = NIODeadline.uptimeNanoseconds(UInt64(max(nanos, 0)))
        if armed.isArmed, armed.deadline <= deadline { return }
        armed.arm(at: deadline, on: eventLoop, handler: self)
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard armed.fired(now: eventLoop.now) else { return }
        let now = Int64(clamping: eventLoop.now.uptimeNanoseconds)
        while let entry = heap.popDue(now: now) { onExpire(entry.payload) }
        if let next = heap.earliest { rearmIfEarlier(than: next) }
    }
}
