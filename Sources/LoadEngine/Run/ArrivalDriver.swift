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
///
/// Steered through the control port (`apply`), the driver leaves the plan for the `ControlState`:
/// an open model's k-th arrival on this loop is where the integral of the asked rate (0 while
/// paused) since the takeover reaches this loop's k-th share; a closed model is regulated every
/// `regulatePeriod` to this loop's share of the target (sessions started when below it; when above,
/// the newest sessions are asked to log out gracefully, as on a stop).
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
    /// The next arrival's timer, with this driver as its handler.
    private var timer = LoopCallback()
    private(set) var isExhausted = false
    private var stopped = false
    /// Called (on this loop) when this loop has no more arrivals and no live sessions.
    var onIdle: (() -> Void)?
    /// True once `onIdle` was called (the run counts each loop once; control cannot revive it).
    private var toldIdle = false
    /// The load set through the control port; nil while the plan rules.
    private var control: ControlState?
    /// The plan's phase when control took over (its session cap and end apply to new sessions).
    private var controlPhase = 0
    /// Seconds since `runStart` of this loop's last controlled arrival (at first: the takeover).
    private var controlCursor = 0.0
    /// The integral of the effective rate still owed from `controlCursor` to the next arrival.
    private var controlArea = 0.0
    /// The closed model's regulator (every `regulatePeriod`).
    private var regulator: RepeatedTask?
    /// Sessions asked to log out because the target fell, by serial (until they end).
    private var surplus: Set<Int> = []
    /// After a session failed, the closed model's regulator starts none before this (a second
    /// later, as a closed user waits before its next session), so a failing server is not hammered.
    private var refillAfter = NIODeadline.uptimeNanoseconds(0)
    /// How often a closed model's number of sessions is brought to the target.
    static let regulatePeriod = TimeAmount.milliseconds(100)
    /// Sessions one loop starts per regulation at most (the rest at the next one).
    static let regulateBurst = 64

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
        regulator?.cancel()
        regulator = nil
        context.stopChurn()
        timer.cancel()
        isExhausted = true
        checkIdle()
    }

    private func armTimer() {
        guard !stopped else { return }
        if let control { return armControlled(control) }
        guard let arrival = schedule.arrival(segment.globalIndex(nextArrival)) else {
            isExhausted = true
            checkIdle()
            return
        }
        let due = runStart + TimeAmount(arrival.offset)
        timer.arm(at: due, on: context.eventLoop, handler: self)
    }

    /// Starts every arrival that is due now, then arms the timer for the next one.
    private func fire() {
        if let control { return fireControlled(control) }
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
            bareJID: "\(username)@\(configuration.domain)", node: environment.node(ofEndpoint: endpoint), endpoint: endpoint,
            arrival: userIndex)
        let script = environment.script(profile: profile, endpoint: endpoint)
        var machine = SessionMachine(
            identity: identity, script: script, settings: environment.settings,
            host: context, generator: rng, intendedStart: environment.instant(intended))
        // The run's first session asks the server about itself, for the manifest (issue 14).
        machine.probesServer = localSerial == 0
        liveSessions.increment()
        context.start(
            VirtualUser(machine: machine, loop: context, phase: phase))
    }

    private func sessionEnded(_ session: VirtualUser, failed: Bool) {
        liveSessions.decrement()
        // A steered closed model: the regulator replaces sessions (up to the target), not the user.
        if control?.model == .closed {
            if failed { refillAfter = context.eventLoop.now + .seconds(1) }
            return checkIdle()
        }
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
        if isExhausted && context.liveSessionCount == 0 && !toldIdle {
            toldIdle = true
            onIdle?()
        }
    }

    // MARK: - Control

    /// Seconds since `runStart`.
    private func seconds(_ deadline: NIODeadline) -> Double { Double((deadline - runStart).nanoseconds) / 1e9 }

    private func deadline(_ seconds: Double) -> NIODeadline { runStart + .nanoseconds(Int64(seconds * 1e9)) }

    /// The integral of the rate between two of this loop's arrivals: each loop of each generator
    /// takes one in `loops × segments`.
    private var controlStride: Double { Double(loopCount * max(segment.count, 1)) }

    /// From now on the load follows `state` (the first call takes over from the plan, whose phase
    /// at the takeover was `phase`). Call on the loop. Ignored once arrivals stopped or this loop
    /// told the run it is idle.
    func apply(_ state: ControlState, phase: Int) {
        guard !stopped, !toldIdle, !context.isStopping else { return }
        if control == nil {
            controlCursor = state.takeover
            // Loops (and generators) interleave: this one's first arrival is its own share.
            controlArea = Double(max(segment.count, 1) * context.loopIndex + segment.index + 1)
        }
        control = state
        controlPhase = phase
        isExhausted = false
        timer.cancel()
        if state.model == .closed {
            if regulator == nil {
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                regulator = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: Self.regulatePeriod) { _ in
                    bound.value.regulate()
                }
            }
        } else {
            armTimer()
        }
    }

    private func armControlled(_ control: ControlState) {
        timer.cancel()
        // Paused (or asked 0) until further notice: the next `apply` arms again.
        guard control.model == .open, let due = control.time(after: controlCursor, area: controlArea) else { return }
        timer.arm(at: deadline(due), on: context.eventLoop, handler: self)
    }

    /// Starts every controlled arrival that is due now (late ones are dropped, as the plan's).
    private func fireControlled(_ control: ControlState) {
        let now = context.eventLoop.now
        let nowSeconds = seconds(now)
        let lateness = TimeAmount(context.environment.configuration.maxArrivalLateness)
        var started = 0
        while !stopped, started < 256, let due = control.time(after: controlCursor, area: controlArea), due <= nowSeconds {
            controlCursor = due
            controlArea = controlStride
            let index = nextArrival
            nextArrival += loopCount
            let intended = deadline(due)
            if now - intended > lateness {
                context.recorder.increment(.droppedArrivals)
                continue
            }
            begin(arrivalIndex: index, phase: controlPhase, intended: intended)
            started += 1
        }
        armTimer()
    }

    /// Brings this loop's sessions to its share of the closed model's target.
    private func regulate() {
        guard let control, control.model == .closed, !stopped, !context.isStopping else { return }
        let now = context.eventLoop.now
        let t = seconds(now)
        let total = Int(max(0, control.asked(at: t)).rounded(.down))
        let generatorTarget = segment.share(ofCount: total)
        let target = generatorTarget / loopCount + (context.loopIndex < generatorTarget % loopCount ? 1 : 0)
        surplus = surplus.filter { context.sessions[$0] != nil }
        let active = context.liveSessionCount - surplus.count
        if active > target {
            // The newest sessions go first: they have done the least of their profile.
            let leaving = context.sessions.values.filter { !surplus.contains($0.serial) }.sorted { $0.serial > $1.serial }
            for session in leaving.prefix(active - target) {
                surplus.insert(session.serial)
                session.gracefulStop()
            }
        } else if active < target, !control.isPaused(at: t), now >= refillAfter {
            for _ in 0..<min(target - active, Self.regulateBurst) {
                let index = nextArrival
                nextArrival += loopCount
                begin(arrivalIndex: index, phase: controlPhase, intended: now)
            }
        }
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

extension ArrivalDriver: NIOScheduledCallbackHandler {
    /// The next arrival is due (`LoopCallback` tells a stale callback apart).
    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard timer.fired(now: eventLoop.now) else { return }
        fire()
    }
}
