import NIOCore

/// One armed-or-not NIO scheduled callback whose handler is its owner (a loop-bound class conforming
/// to `NIOScheduledCallbackHandler`): arming allocates nothing, where `scheduleTask` makes a promise,
/// a future and two closures per call (3–5 allocations).
///
/// A callback cancelled after the loop took it for this tick still runs, so the owner's
/// `handleScheduledCallback` asks `fired(now:)` first: only a callback that is armed and due counts
/// (the loop never runs one early, so one armed since is not due yet — or due now, and then the later
/// one finds nothing armed).
///
/// Loop-bound: use on the owner's event loop only. `deadline` is `distantFuture` while unarmed.
struct LoopCallback {
    private(set) var deadline = NIODeadline.distantFuture
    /// Last, so that its owner's small fields can follow in the handle's tail bytes.
    private var callback: NIOScheduledCallback?

    var isArmed: Bool { callback != nil }

    /// Arms (re-arms) the callback for `deadline` on `eventLoop`, with `handler` called then.
    mutating func arm(at deadline: NIODeadline, on eventLoop: any EventLoop, handler: some NIOScheduledCallbackHandler & AnyObject) {
        callback?.cancel()
        self.deadline = deadline
        // Fails only while the loop shuts down: then no callback comes, as none would from a dropped task.
        callback = try? eventLoop.assumeIsolatedUnsafeUnchecked().scheduleCallback(at: deadline, handler: handler)
    }

    mutating func cancel() {
        callback?.cancel()
        callback = nil
        deadline = .distantFuture
    }

    /// Whether a callback running at `now` is the armed one come due; if so, it is disarmed.
    mutating func fired(now: NIODeadline) -> Bool {
        guard callback != nil, now >= deadline else { return false }
        callback = nil
        deadline = .distantFuture
        return true
    }
}
