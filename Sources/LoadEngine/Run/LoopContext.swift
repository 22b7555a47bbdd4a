import LoadResults
import NIOCore
import XMPPCore

/// The state one event loop shares among its sessions: the stanza parser and SCRAM key cache (one
/// each per loop, see docs/ARCHITECTURE.md), the loop's metrics recorder, and its live sessions.
///
/// Loop-bound: every member is touched only on `eventLoop`, so nothing here needs a lock, and the
/// recorder is merged into run-wide snapshots by the collector at interval boundaries.
final class LoopContext {
    let eventLoop: any EventLoop
    let environment: RunEnvironment
    let loopIndex: Int
    let parser = StanzaParser()
    let keyCache = SCRAMKeyCache()
    var recorder: MetricsRecorder
    /// Login, step and logout timeouts of this loop's sessions.
    let timeouts: SessionTimeouts
    /// Live sessions on this loop, by serial number.
    private(set) var sessions: [Int: VirtualUserHandler] = [:]
    /// Sessions connecting or logging in / logged in, for the gauges.
    var connectingCount = 0
    var onlineCount = 0
    /// Set when the run's load phase ended: sessions log out after their current step.
    private(set) var isStopping = false
    /// Cached message bodies by size, so `body_size: N` allocates one string per loop.
    private var fillerBodies: [Int: String] = [:]

    init(eventLoop: any EventLoop, environment: RunEnvironment, loopIndex: Int) {
        self.eventLoop = eventLoop
        self.environment = environment
        self.loopIndex = loopIndex
        self.recorder = MetricsRecorder(registry: environment.registry)
        self.timeouts = SessionTimeouts(eventLoop: eventLoop)
        timeouts.onExpire = { [unowned self] token in
            self.sessions[token.serial]?.timeoutExpired(generation: token.generation)
        }
    }

    var liveSessionCount: Int { sessions.count }

    func register(_ session: VirtualUserHandler) { sessions[session.identity.serial] = session }
    func unregister(_ session: VirtualUserHandler) { sessions[session.identity.serial] = nil }

    /// Asks every live session to finish its current step and log out.
    func beginGracefulStop() {
        isStopping = true
        for session in Array(sessions.values) { session.gracefulStop() }
    }

    /// Closes every session still alive (the graceful-stop timeout expired).
    func closeAll() {
        isStopping = true
        for session in Array(sessions.values) { session.abort(kind: "stopped-at-deadline") }
    }

    /// Set by the loop's `ArrivalDriver`: told about every session that ended.
    var sessionEndedHook: ((VirtualUserHandler, Bool) -> Void)?

    /// Called by a session exactly once, when it ended (after it unregistered).
    func sessionEnded(_ session: VirtualUserHandler, failed: Bool) {
        sessionEndedHook?(session, failed)
    }

    func fillerBody(size: Int) -> String {
        if let body = fillerBodies[size] { return body }
        let pattern = Array("xmppload-filler-0123456789 ".utf8)
        let body = String(decoding: (0..<size).map { pattern[$0 % pattern.count] }, as: UTF8.self)
        fillerBodies[size] = body
        return body
    }
}
