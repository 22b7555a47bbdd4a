import LoadProfile
import LoadResults
import NIOCore
import Synchronization

/// What an input (`RunInput`, e.g. the control port) may do to a running run: steer its arrivals,
/// ask it to stop, and read where it stands. The run hands one to each input when it starts and
/// records every change an input makes (in `intervals.jsonl` between the intervals, and in
/// `summary.json` `control_events`), so a steered run says what was done to it.
///
/// Thread safety: inputs call from their own threads (an HTTP connection's event loop), the run from
/// its orchestrating task; what is kept is behind one `Mutex`, and a change reaches each loop's
/// arrival driver as a copy through `eventLoop.execute`, so the drivers share nothing.
public final class RunSteering: Sendable {
    private struct Shared {
        var events: [ControlEvent] = []
        /// How many of `events` the run already wrote.
        var handedOut = 0
        var stopping = false
        var last: IntervalSnapshot?
    }

    /// When the run's clock started (its time 0).
    public let runStart: NIODeadline
    public let plan: LoadPlan
    public let configuration: RunConfiguration
    private let shared = Mutex(Shared())
    private let liveSessions: LiveSessionCounter
    private let applyToLoops: @Sendable (ControlState, Int) -> Void
    private let stop: @Sendable (StopReason) -> Void

    init(
        runStart: NIODeadline, plan: LoadPlan, configuration: RunConfiguration, liveSessions: LiveSessionCounter,
        applyToLoops: @escaping @Sendable (ControlState, Int) -> Void, stop: @escaping @Sendable (StopReason) -> Void
    ) {
        self.runStart = runStart
        self.plan = plan
        self.configuration = configuration
        self.liveSessions = liveSessions
        self.applyToLoops = applyToLoops
        self.stop = stop
    }

    /// Seconds since the run's start, now.
    public var elapsed: Double { Double((NIODeadline.now() - runStart).nanoseconds) / 1e9 }

    /// Sessions alive now, on all loops.
    public var liveSessionCount: Int { liveSessions.current }

    /// The last interval that ended (nil before the first).
    public var latestInterval: IntervalSnapshot? { shared.withLock { $0.last } }

    /// True once the run began stopping: nothing can change the load any more.
    public var isStopping: Bool { shared.withLock { $0.stopping } }

    /// How many changes were recorded so far.
    public var changeCount: Int { shared.withLock { $0.events.count } }

    /// Hands `state` (arrivals from now on; `phase`: the plan's phase at the takeover) to every
    /// loop's arrival driver without waiting. Record the change first (`record`).
    public func apply(_ state: ControlState, phase: Int) {
        applyToLoops(state, phase)
    }

    /// Records a change the run will write (a new load, a pause, a stop asked for).
    public func record(_ event: ControlEvent) {
        shared.withLock { $0.events.append(event) }
    }

    /// Asks the run for a graceful stop (as SIGINT); a second request closes at once.
    public func requestStop(reason: StopReason = .interrupted) { stop(reason) }

    // MARK: - The run's side

    /// Every change so far, in order (for `summary.json`).
    var events: [ControlEvent] { shared.withLock { $0.events } }

    /// The changes not yet written to `intervals.jsonl`.
    func takeNewEvents() -> [ControlEvent] {
        shared.withLock { shared in
            let new = Array(shared.events[shared.handedOut...])
            shared.handedOut = shared.events.count
            return new
        }
    }

    func observed(_ interval: IntervalSnapshot) { shared.withLock { $0.last = interval } }

    func beganStopping() { shared.withLock { $0.stopping = true } }
}
