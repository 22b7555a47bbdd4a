import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// The state one event loop shares among its sessions: the stanza parser and SCRAM key cache (one
/// each per loop, see docs/ARCHITECTURE.md), the loop's metrics recorder, timeouts, connector and
/// live virtual users. It is the `SessionHost` of every session on the loop.
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
    private(set) var connectingCount = 0
    private(set) var onlineCount = 0
    /// Set when the run's load phase ended: sessions log out after their current step.
    private(set) var isStopping = false
    /// Cached message bodies by size, so `body_size: N` allocates one string per loop.
    private var fillerBodies: [Int: String] = [:]
    /// Set by the loop's `ArrivalDriver`: told about every session that ended.
    var sessionEndedHook: ((VirtualUser, Bool) -> Void)?
    private var churnTask: RepeatedTask?
    /// What the run's probing session (if it is on this loop) learned about the server.
    private(set) var serverFacts: ServerFacts?
    /// the probing session's XEP-0202 time samples, if it is on this loop.
    private(set) var clockSamples: [ClockOffset.Sample] = []
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

    // MARK: - Action buffers

    /// Emptied action arrays with their storage, for `VirtualUser.handle`: the machine appends to one,
    /// the user performs it and gives it back, so handling an event allocates no array. A stack, not one
    /// buffer, because performing an action can handle another event (a close reports the connection
    /// lost) before the first buffer is back. At most `maxSpareActionBuffers` are kept.
    private var spareActionBuffers: [[SessionAction]] = []
    private static let maxSpareActionBuffers = 8

    func takeActionBuffer() -> [SessionAction] {
        spareActionBuffers.popLast() ?? []
    }

    /// Takes `buffer`'s storage back, emptied (`buffer` is left empty): the caller must hold no other
    /// copy, or emptying it would allocate new storage.
    func returnActionBuffer(_ buffer: inout [SessionAction]) {
        guard spareActionBuffers.count < Self.maxSpareActionBuffers else { return }
        buffer.removeAll(keepingCapacity: true)
        spareActionBuffers.append([])
        swap(&spareActionBuffers[spareActionBuffers.count - 1], &buffer)
    }

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

    // MARK: - PBKDF2 off the loop

    /// Users waiting for a key derivation, by request: concurrent cache misses for the same
    /// (password, salt, iterations) — every session at the start of a run — share one PBKDF2.
    private var derivations: [SCRAMKeyRequest: [VirtualUser]] = [:]

    /// Runs `request`'s PBKDF2 on NIO's thread pool and hands the result to `user` on this loop.
    func deriveKey(_ request: SCRAMKeyRequest, for user: VirtualUser) {
        if derivations[request] != nil {
            derivations[request]!.append(user)
            return
        }
        derivations[request] = [user]
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { () throws -> SCRAMKeys in
            try request.derive()
        }.whenComplete { outcome in
            let context = bound.value
            let result: Result<SCRAMKeys, SASLError> = outcome.mapError { error in
                (error as? SASLError) ?? .crypto("key derivation did not run: \(error)")
            }
            for waiting in context.derivations.removeValue(forKey: request) ?? [] {
                waiting.handle(.keyDerived(result))
            }
        }
    }

    // MARK: - SessionHost

    func fillerBody(size: Int) -> String {
        if let body = fillerBodies[size] { return body }
        let pattern = Array("xmppload-filler-0123456789 ".utf8)
        let body = String(decoding: (0..<size).map { pattern[$0 % pattern.count] }, as: UTF8.self)
        fillerBodies[size] = body
        return body
    }

    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int? {
        targets.randomOnlineSlot(excluding: slot, at: now(), using: &generator)  // whole run
    }

    func setOnline(_ slot: Int, _ online: Bool) {
        environment.directory.setOnline(slot, online)
    }

    func releaseAccount(_ slot: Int) {
        environment.directory.release(slot)
    }

    func sessionStageChanged(from old: SessionStage, to new: SessionStage) {
        switch old {
        case .connecting: connectingCount -= 1
        case .online: onlineCount -= 1
        case .idle, .ended: break
        }
        switch new {
        case .connecting: connectingCount += 1
        case .online: onlineCount += 1
        case .idle, .ended: break
        }
    }

    /// a clock sample on the wall clock (the session clock's origin placed on it now).
    func serverTimeAnswered(sent: SessionInstant, received: SessionInstant, utc: String) {
        guard let server = ClockOffset.serverTime(utc: utc) else { return }
        let wallNow = Int64(Date().timeIntervalSince1970 * 1e9)
        let origin = wallNow - now().nanoseconds
        clockSamples.append(
            ClockOffset.Sample(
                sent: origin + sent.nanoseconds, received: origin + received.nanoseconds, server: server.nanoseconds, resolution: server.resolution))
        if clockSamples.count == SessionMachine.timeQueries, let estimate = ClockOffset.estimate(clockSamples) {
            environment.clock.estimated(estimate)
        }
    }

    var stampClock: MessageStamp.Clock? { environment.clock.stampClock }  //

    func learned(_ facts: ServerFacts) {
        var known = serverFacts ?? ServerFacts()
        known.merge(facts)
        serverFacts = known
    }

    // MARK: - ByteCountSink

    func received(_ byteCount: Int) { recorder.increment(.bytesReceived, by: UInt64(byteCount)) }
    func sent(_ byteCount: Int) { recorder.increment(.bytesSent, by: UInt64(byteCount)) }
}
