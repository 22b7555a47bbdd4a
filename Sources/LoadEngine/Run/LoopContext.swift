import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// The state one event loop shares among its sessions: the stanza parser and SCRAM key cache (one
/// each per loop, see docs/ARCHITECTURE.md), the loop's metrics recorder, timeouts, connector and
/// live virtual users — the registry of users, their graceful stop and churn are its own job; the
/// rest it composes (`ActionBufferPool`, `SessionGauges`, `ProbedFacts`, `FillerBodies`, `KeyDerivations`).
/// It is the `SessionHost` of every session on the loop: what a session's machine must ask.
///
/// Loop-bound: every member is touched only on `eventLoop`, so nothing here needs a lock, and the
/// recorder is merged into run-wide snapshots by the collector at interval boundaries.
final class LoopContext: SessionHost, ByteCountSink {
    let eventLoop: any EventLoop
    let environment: RunEnvironment
    let loopIndex: Int
    let parser: StanzaParser
    /// Where the loop's connections serialize the elements they write.
    let outboundScratch = OutboundScratch()
    let keyCache = SCRAMKeyCache()
    var recorder: MetricsRecorder
    /// Login, step and logout timeouts of this loop's sessions.
    let timeouts: SessionTimeouts
    /// Opens connections for this loop's users: TCP through one reusable bootstrap; tests put an
    /// `EmbeddedChannel` here.
    lazy var connector: any UserConnecting = SessionConnector(context: self)
    /// Live users on this loop, by serial number.
    private(set) var sessions: [Int: VirtualUser] = [:]
    /// Sessions connecting or logging in / logged in, for the gauges.
    var gauges = SessionGauges()
    /// Set when the run's load phase ended: sessions log out after their current step.
    private(set) var isStopping = false
    /// Cached message bodies by size, so `body_size: N` allocates one string per loop.
    private let fillerBodies = FillerBodies()
    let actionBuffers = ActionBufferPool()
    /// PBKDF2 off the loop, shared by concurrent cache misses.
    private(set) lazy var keyDerivations = KeyDerivations(eventLoop: eventLoop)
    /// Set by the loop's `ArrivalDriver`: told about every session that ended.
    var sessionEndedHook: ((VirtualUser, Bool) -> Void)?
    private var churnTask: RepeatedTask?
    /// What the run's probing session (if it is on this loop) learned about the server and its clock.
    private(set) var probed = ProbedFacts()
    var serverFacts: ServerFacts? { probed.serverFacts }
    var clockSamples: [ClockOffset.Sample] { probed.clockSamples }
    private var churnGenerator = SeededGenerator(seed: 0, stream: 0)
    /// `to: random` over the whole run (other segments' sessions from the plan).
    private lazy var targets = WholeRunTargets(
        directory: environment.directory, population: environment.configuration.population,
        segment: environment.configuration.segment, firstAccount: environment.configuration.accounts.lowerBound)

    init(eventLoop: any EventLoop, environment: RunEnvironment, loopIndex: Int) {
        self.eventLoop = eventLoop
        self.environment = environment
        self.loopIndex = loopIndex
        self.parser = StanzaParser(limits: environment.configuration.xmlLimits)
        self.recorder = MetricsRecorder(registry: environment.registry)
        self.timeouts = SessionTimeouts(eventLoop: eventLoop)
        timeouts.onExpire = { [unowned self] token in
            self.sessions[token.serial]?.timeoutExpired(generation: token.generation)
        }
    }

    var liveSessionCount: Int { sessions.count }

    // MARK: - Clock

    /// The loop's now on the run's session clock.
    func now() -> SessionInstant { environment.instant(eventLoop.now) }

    /// The loop deadline of a session instant.
    func deadline(_ instant: SessionInstant) -> NIODeadline { environment.deadline(instant) }

    // MARK: - Users

    /// Registers `user` and starts it.
    func start(_ user: VirtualUser) {
        sessions[user.serial] = user
        user.start()
    }

    /// Called by a user exactly once, when it ended.
    func sessionEnded(_ user: VirtualUser, failed: Bool) {
        sessions[user.serial] = nil
        sessionEndedHook?(user, failed)
    }

    // MARK: - Churn

    /// Drops one online session of this loop every `interval` (`--churn`); picks are seeded per loop.
    func startChurn(every interval: TimeAmount) {
        churnGenerator = SeededGenerator(seed: environment.seed, stream: UInt64(0xC4_0000 + loopIndex))
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        churnTask = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            bound.value.churnOne()
        }
    }

    func stopChurn() {
        churnTask?.cancel()
        churnTask = nil
    }

    private func churnOne() {
        guard !isStopping, !sessions.isEmpty else { return }
        // A few random probes for a session that is online and running its steps.
        for _ in 0..<8 {
            guard let user = sessions.values.randomElement(using: &churnGenerator) else { return }
            if user.machine.isRunning {
                user.handle(.churn)
                return
            }
        }
    }

    /// Asks every live session to finish its current step and log out.
    func beginGracefulStop() {
        isStopping = true
        stopChurn()
        for session in Array(sessions.values) { session.gracefulStop() }
    }

    /// Closes every session still alive (the graceful-stop timeout expired).
    func closeAll() {
        isStopping = true
        for session in Array(sessions.values) { session.abort(.stoppedAtDeadline) }
    }

    // MARK: - SessionHost

    func fillerBody(size: Int) -> String { fillerBodies.body(size: size) }

    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int? {
        targets.randomOnlineSlot(excluding: slot, at: now(), using: &generator)  // whole run
    }

    var stampClock: MessageStamp.Clock? { environment.clock.stampClock }

    func fallbackEndpoint(after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int) -> Int? {
        environment.fallbackEndpoint(after: failure, attempt: attempt, first: first, arrival: arrival)
    }

    func node(ofEndpoint endpoint: Int) -> ServerNode? { environment.node(ofEndpoint: endpoint) }

    // MARK: - What the probing session learned

    func learned(_ facts: ServerFacts) { probed.learned(facts) }

    /// A clock sample of the probing session; the run's clock takes the estimate once all arrived.
    func clockSample(sent: SessionInstant, received: SessionInstant, utc: String) {
        if let estimate = probed.clockSample(sent: sent, received: received, utc: utc, sessionNow: now()) {
            environment.clock.estimated(estimate)
        }
    }

    // MARK: - ByteCountSink

    func received(_ byteCount: Int) { recorder.increment(.bytesReceived, by: UInt64(byteCount)) }
    func sent(_ byteCount: Int) { recorder.increment(.bytesSent, by: UInt64(byteCount)) }
}
