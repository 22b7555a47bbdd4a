// The small parts a LoopContext composes, one job each: action buffers, facts, filler bodies.
import Foundation
import LoadResults
import SessionCore

/// Emptied action arrays with their storage, for `VirtualUser.handle`: the machine appends to one, the
/// user performs it and gives it back, so handling an event allocates no array. A stack, not one
/// buffer, because performing an action can handle another event (a close reports the connection
/// lost) before the first buffer is back. At most `maxSpare` are kept. Loop-bound.
final class ActionBufferPool {
    private var spare: [[SessionAction]] = []
    static let maxSpare = 8

    func take() -> [SessionAction] { spare.popLast() ?? [] }

    /// Takes `buffer`'s storage back, emptied (`buffer` is left empty): the caller must hold no other
    /// copy, or emptying it would allocate new storage.
    func give(back buffer: inout [SessionAction]) {
        guard spare.count < Self.maxSpare else { return }
        buffer.removeAll(keepingCapacity: true)
        spare.append([])
        swap(&spare[spare.count - 1], &buffer)
    }
}

/// What the run's probing session (when it is on this loop) learned: the server's facts for the
/// manifest and its XEP-0202 clock samples, placed on the wall clock. Loop-bound.
struct ProbedFacts {
    private(set) var serverFacts: ServerFacts?
    private(set) var clockSamples: [ClockOffset.Sample] = []

    mutating func learned(_ facts: ServerFacts) {
        var known = serverFacts ?? ServerFacts()
        known.merge(facts)
        serverFacts = known
    }

    /// Adds one time answer (`sent`, `received` on the session clock whose instant now is `sessionNow`);
    /// returns the clock offset estimate once the probe's last sample arrived.
    mutating func clockSample(sent: SessionInstant, received: SessionInstant, utc: String, sessionNow: SessionInstant) -> ClockOffset? {
        guard let server = ClockOffset.serverTime(utc: utc) else { return nil }
        let wallNow = Int64(Date().timeIntervalSince1970 * 1e9)
        let origin = wallNow - sessionNow.nanoseconds
        clockSamples.append(
            ClockOffset.Sample(
                sent: origin + sent.nanoseconds, received: origin + received.nanoseconds, server: server.nanoseconds,
                resolution: server.resolution))
        guard clockSamples.count == SessionMachine.timeQueries else { return nil }
        return ClockOffset.estimate(clockSamples)
    }
}

/// Message bodies of `body_size: N` steps, one string per size per loop. Loop-bound.
final class FillerBodies {
    private var bodies: [Int: String] = [:]

    func body(size: Int) -> String {
        if let body = bodies[size] { return body }
        let pattern = Array("xmppload-filler-0123456789 ".utf8)
        let body = String(decoding: (0..<size).map { pattern[$0 % pattern.count] }, as: UTF8.self)
        bodies[size] = body
        return body
    }
}
