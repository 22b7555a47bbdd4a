import Atomics
import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// Starts this event loop's share of the run's arrivals at their intended times.
///
/// This generator's arrivals are the schedule's arrivals n with n % N == i (`--segment i/N`; the whole
/// schedule by default); its k-th one belongs to loop `k % loops`, so each loop walks its own arrivals
/// with one timer at a time — no shared queue, no lock. Accounts are picked by k within the segment's
/// block of accounts; the global n seeds the session (the same user behaves the same however the
/// plan is split).
/// When an arrival's timer fires later than `maxArrivalLateness` after its intended time, or no account
/// or capacity is free, the arrival is counted as *dropped*, never queued (measurement rule 2).
/// Closed-model users whose profile repeats start a new session when the previous one ends, until
/// their phase is over.
final class ArrivalDriver {
    private let context: LoopContext
    private let schedule: ArrivalSchedule
    private var runStart = NIODeadline.distantFuture
    private let loopCount: Int
    private let sessionCap: Int
    private let liveSessions: LiveSessionCounter
    private let serials: ManagedAtomic<Int>
    /// The next of this generator's arrivals (its k-th) this loop will start; `segment.globalIndex(k)`
    /// is its index in the schedule.
    private var nextArrival: Int
    private let segment: Segment
    private var timer: Scheduled<Void>?
    private(set) var isExhausted = false
    private var stopped = false
    /// Called (on this loop) when this loop has no more arrivals and no live sessions.
    var onIdle: (() -> Void)?

    init(
        context: LoopContext, schedule: ArrivalSchedule, loopCount: Int,
        sessionCap: Int, liveSessions: LiveSessionCounter, serials: ManagedAtomic<Int>
    ) {
        self.context = context
        self.schedule = schedule
        self.loopCount = loopCount
        self.sessionCap = sessionCap
        self.liveSessions = liveSessions
        self.serials = serials
        self.nextArrival = context.loopIndex
        self.segment = context.environment.configuration.segment
    }

    /// Arms the first timer; arrival offsets count from `runStart`. Call on the loop.
    func start(runStart: NIODeadline) {
        self.runStart = runStart
        context.sessionEndedHook = { [unowned self] session, failed in self.sessionEnded(session, failed: failed) }
        let configuration = context.environment.configuration
        if let rate = configuration.churnRate, rate > 0 {
            // This loop's share of this generator's share of the run's churn.
            let perLoop = rate / Double(max(segment.count, 1)) / Double(max(loopCount, 1))
            context.startChurn(every: .nanoseconds(Int64(min(1e9 / perLoop, 3.6e12))))
        }
        armTimer()
    }

    /// No more arrivals (the load phases ended or the run is stopping).
    func stop() {
        stopped = true
        context.stopChurn()
        timer?.cancel()
        timer = nil
        isExhausted = true
        checkIdle()
    }

    private func armTimer() {
        guard !stopped else { return }
        guard let arrival = schedule.arrival(segment.globalIndex(nextArrival)) else {
            isExhausted = true
            checkIdle()
            return
        }
        let due = runStart + TimeAmount(arrival.offset)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) { bound.value.fire() }
    }

    /// Starts every arrival that is due now, then arms the timer for the next one.
    private func fire() {
        timer = nil
        let now = context.eventLoop.now
        var started = 0
        while !stopped, let arrival = schedule.arrival(segment.globalIndex(nextArrival)) {
            let intended = runStart + TimeAmount(arrival.offset)
            if intended > now { break }
            let index = nextArrival
            nextArrival += loopCount
            if now - intended > TimeAmount(context.environment.configuration.maxArrivalLateness) {
                context.recorder.increment(.droppedArrivals)
                continue
            }
            begin(arrivalIndex: index, phase: arrival.phase, intended: intended)
            started += 1
            if started >= 256 { break }  // let the loop breathe; the rest is picked up right away
        }
        armTimer()
    }

    private func phaseEnd(_ phase: Int) -> NIODeadline {
        runStart + TimeAmount(schedule.phaseEnd(phase))
    }

    /// Starts this generator's `arrivalIndex`-th arrival (local: `segment.globalIndex` gives the schedule's).
    private func begin(arrivalIndex: Int, phase: Int, intended: NIODeadline) {
        let environment = context.environment
        let accounts = environment.configuration.accounts
        if liveSessions.current >= sessionCap
            || schedule.isAtCapacity(phase: phase, live: liveSessions.current, segment: segment)
        {
            context.recorder.increment(.droppedArrivals)
            context.recorder.recordError(kind: ArrivalDrop.capacity.kind)
            return
        }
        guard let slot = environment.directory.claimFree(startingAt: arrivalIndex % accounts.count) else {
            context.recorder.increment(.droppedArrivals)
            context.recorder.recordError(kind: ArrivalDrop.noFreeAccount.kind)
            return
        }
        startSession(slot: slot, userIndex: segment.globalIndex(arrivalIndex), phase: phase, intended: intended)
    }

    private func startSession(slot: Int, userIndex: Int, phase: Int, intended: NIODeadline) {
        let environment = context.environment
        let configuration = environment.configuration
        // serials are unique across the segments of a run (they are the stamps' sender ids).
        let localSerial = serials.loadThenWrappingIncrement(ordering: .relaxed)
        let serial = localSerial * segment.count + segment.index
        let number = configuration.accounts.lowerBound + slot
        let username = "\(configuration.accountPrefix)\(number)"
        // The profile first (the session's own seeded draw), then the endpoint among those its
        // transport allows, by the run-wide index: every segment and rerun picks the same.
        var rng = SeededGenerator(seed: environment.seed, stream: UInt64(userIndex))
        let profile = environment.pickProfile(using: &rng)
        let endpoint = environment.endpoint(forArrival: userIndex, profile: profile)
        let identity = SessionIdentity(
            serial: serial, slot: slot, accountNumber: number, username: username,
            bareJID: "\(username)@\(configuration.domain)", node: environment.node(ofEndpoint: endpoint))
        let script = environment.script(profile: profile, endpoint: endpoint)
        var machine = SessionMachine(
            identity: identity, script: script, settings: environment.settings,
            host: context, generator: rng, intendedStart: environment.instant(intended))
        // The run's first session asks the server about itself, for the manifest (issue 14).
        machine.probesServer = localSerial == 0
        liveSessions.increment()
        context.start(
            VirtualUser(
                machine: machine, loop: context, userIndex: userIndex, phase: phase,
                endpoint: endpoint))
    }

    private func sessionEnded(_ session: VirtualUser, failed: Bool) {
        liveSessions.decrement()
        let now = context.eventLoop.now
        if session.script.repeatsForever, !stopped, !context.isStopping, now < phaseEnd(session.phase) {
            // A closed-model user runs its profile again; after a failure, wait a second first.
            let userIndex = session.userIndex
            let phase = session.phase
            let previousSlot = session.machine.identity.slot
            let delay: TimeAmount = failed ? .seconds(1) : .zero
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: delay) {
                let driver = bound.value
                guard !driver.stopped, !driver.context.isStopping else { return driver.checkIdle() }
                guard let slot = driver.context.environment.directory.claimFree(startingAt: previousSlot) else {
                    driver.context.recorder.increment(.droppedArrivals)
                    return driver.checkIdle()
                }
                driver.startSession(slot: slot, userIndex: userIndex, phase: phase, intended: driver.context.eventLoop.now)
            }
            return
        }
        checkIdle()
    }

    private func checkIdle() {
        if isExhausted && context.liveSessionCount == 0 { onIdle?() }
    }
}

/// Why an arrival was dropped instead of started (measurement rule 2), as counted in `errors`.
enum ArrivalDrop {
    /// The session cap (file descriptors) or the phase's `max_sessions` was reached.
    case capacity
    /// Every account of this generator's range is in use.
    case noFreeAccount

    var kind: String {
        switch self {
        case .capacity: return "dropped-capacity"
        case .noFreeAccount: return "dropped-no-free-account"
        }
    }
}
