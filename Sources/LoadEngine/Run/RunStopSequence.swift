import LoadResults

/// How a run ends, as a value: load → draining (message grace) → stopping (graceful stop, then close
/// what is left) → done, decided from one observation at a time.
///
/// The run polls every 50 ms, observes (time since the run started, stop requests, whether every
/// loop is idle, messages in flight, live sessions) and performs the returned actions in order. No
/// I/O and no clock of its own: every time is a `Duration` since the run's start, so tests are tables
/// of plain values.
///
/// Transitions (at most one phase change per observation, except a second stop request, which closes
/// at once):
/// - load, a stop request → stopping: stop arrivals, begin the graceful stop; the reason is the
///   request's. Two or more requests → also close everything and finish.
/// - load, the planned end reached → draining until `now + messageGrace`: stop arrivals; reason
///   `.duration`. Sessions stay online so a late message is late, not lost.
/// - load, every loop idle (every arrival started and every session ended) → done: finish; reason
///   `.completed`.
/// - draining, a stop request, the grace over, or no message in flight → stopping: begin the graceful
///   stop (the reason stays `.duration`: the load ran as planned). Two requests → close and finish.
/// - stopping, no live session → done: finish. A second request or the graceful-stop deadline
///   (`gracefulStop` after stopping began) → close everything and finish.
///
/// Precedence within one observation: stop request, then the planned end, then idleness.
/// Invariant: `.finish` is returned exactly once, as the last action; after it, observations
/// return no action.
public struct RunStopSequence: Sendable, Equatable {
    /// Where the run is. Deadlines are durations since the run's start.
    public enum Phase: Sendable, Equatable {
        case load
        case draining(until: Duration)
        case stopping(deadline: Duration)
        case done
    }

    /// What the run must do, in the order returned.
    public enum Action: Sendable, Equatable {
        /// Stop starting new sessions (every loop's arrival driver).
        case stopArrivals
        /// Sessions finish their current step and log out; announce "stopping" with the reason.
        case beginGracefulStop
        /// Close every session still alive.
        case closeAll
        /// Take the last snapshot and write the results.
        case finish
    }

    /// What the run sees at one poll.
    public struct Observation: Sendable, Equatable {
        /// Time since the run's start.
        public var now: Duration
        /// `LoadRun.requestStop` calls so far (SIGINT/SIGTERM, `--abort-on-fail`).
        public var stopRequests: Int
        /// The reason given with the first stop request (ignored while `stopRequests` is 0).
        public var requestedReason: StopReason
        /// Every loop's arrival driver started its last arrival and saw its last session end.
        public var everyLoopIdle: Bool
        /// Messages sent and not yet received; only read while draining (`needsMessagesInFlight`).
        public var messagesInFlight: Int64
        /// Sessions alive on all loops.
        public var liveSessions: Int

        public init(
            now: Duration, stopRequests: Int = 0, requestedReason: StopReason = .interrupted,
            everyLoopIdle: Bool = false, messagesInFlight: Int64 = 0, liveSessions: Int = 0
        ) {
            self.now = now
            self.stopRequests = stopRequests
            self.requestedReason = requestedReason
            self.everyLoopIdle = everyLoopIdle
            self.messagesInFlight = messagesInFlight
            self.liveSessions = liveSessions
        }
    }

    /// When the load phase ends by itself (the plan's duration or `--duration`); nil: when every
    /// session finished.
    public let loadEnd: Duration?
    /// How long sessions stay online after the load for messages in flight.
    public let messageGrace: Duration
    /// How long sessions get to finish their step and log out before they are closed.
    public let gracefulStop: Duration

    public private(set) var phase = Phase.load
    /// Why the run ended (or is ending); `.completed` until something else ended the load.
    public private(set) var reason = StopReason.completed

    public init(loadEnd: Duration?, messageGrace: Duration, gracefulStop: Duration) {
        self.loadEnd = loadEnd
        self.messageGrace = messageGrace
        self.gracefulStop = gracefulStop
    }

    /// True while draining: the next observation's `messagesInFlight` is read (it costs one task
    /// per loop, so it is not measured otherwise).
    public var needsMessagesInFlight: Bool {
        if case .draining = phase { return true }
        return false
    }

    public var isDone: Bool { phase == .done }

    /// Advances by one observation and returns what the run must do, in order.
    public mutating func observe(_ observation: Observation) -> [Action] {
        let now = observation.now
        let requests = observation.stopRequests
        switch phase {
        case .load:
            if requests > 0 {
                reason = observation.requestedReason
                return [.stopArrivals] + beginStopping(at: now, closeAtOnce: requests > 1)
            }
            if let loadEnd, now >= loadEnd {
                reason = .duration
                phase = .draining(until: now + messageGrace)
                return [.stopArrivals]
            }
            if observation.everyLoopIdle {
                phase = .done
                return [.finish]
            }
            return []
        case .draining(let until):
            if requests > 0 || now >= until || observation.messagesInFlight == 0 {
                return beginStopping(at: now, closeAtOnce: requests > 1)
            }
            return []
        case .stopping(let deadline):
            if observation.liveSessions == 0 {
                phase = .done
                return [.finish]
            }
            if requests > 1 || now >= deadline {
                phase = .done
                return [.closeAll, .finish]
            }
            return []
        case .done:
            return []
        }
    }

    private mutating func beginStopping(at now: Duration, closeAtOnce: Bool) -> [Action] {
        if closeAtOnce {
            phase = .done
            return [.beginGracefulStop, .closeAll, .finish]
        }
        phase = .stopping(deadline: now + gracefulStop)
        return [.beginGracefulStop]
    }
}
