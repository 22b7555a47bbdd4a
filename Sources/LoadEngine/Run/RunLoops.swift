import Atomics
import LoadProfile
import LoadResults
import NIOCore

/// The run's event loops, each with its `LoopContext` and `ArrivalDriver`, and the few things the
/// orchestrating task asks of all of them: start, stop arrivals, stop gracefully, close, count
/// messages in flight.
///
/// Every call runs the work on each loop in turn (`submit`) and waits for it, so no state is shared
/// between loops and nothing is locked. Used from the run's task only.
struct RunLoops {
    let loops: [any EventLoop]
    let contexts: [NIOLoopBound<LoopContext>]
    private let drivers: [NIOLoopBound<ArrivalDriver>]
    /// Loops whose driver has no arrival left and no live session (each counts itself once).
    private let idleLoops: ManagedAtomic<Int>

    /// Builds a context and an arrival driver on each loop; nothing starts yet.
    static func make(
        group: any EventLoopGroup, environment: RunEnvironment, schedule: ArrivalSchedule,
        sessionCap: Int, liveSessions: LiveSessionCounter
    ) async throws -> RunLoops {
        let loops = group.makeIterator().map { $0 }
        let serials = ManagedAtomic<Int>(0)
        let idleLoops = ManagedAtomic<Int>(0)
        var contexts: [NIOLoopBound<LoopContext>] = []
        var drivers: [NIOLoopBound<ArrivalDriver>] = []
        for (index, loop) in loops.enumerated() {
            let pair = try await loop.submit {
                let context = LoopContext(eventLoop: loop, environment: environment, loopIndex: index)
                let driver = ArrivalDriver(
                    context: context, schedule: schedule, loopCount: loops.count,
                    sessionCap: sessionCap, liveSessions: liveSessions, serials: serials)
                driver.onIdle = { idleLoops.wrappingIncrement(ordering: .relaxed) }
                return (NIOLoopBound(context, eventLoop: loop), NIOLoopBound(driver, eventLoop: loop))
            }.get()
            contexts.append(pair.0)
            drivers.append(pair.1)
        }
        return RunLoops(loops: loops, contexts: contexts, drivers: drivers, idleLoops: idleLoops)
    }

    /// Starts every driver (and loop-lag probe) in one synchronous pass, so no loop starts late
    /// because this task waited for a thread between two loops. Arrival offsets count from `runStart`.
    func start(runStart: NIODeadline) {
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index]
            let context = contexts[index]
            loop.execute {
                LoopLagProbe.start(on: loop, context: context.value)
                driver.value.start(runStart: runStart)
            }
        }
    }

    /// Every loop started its last arrival and saw its last session end.
    var everyLoopIdle: Bool { idleLoops.load(ordering: .relaxed) >= loops.count }

    /// Hands a control change to every loop's driver (`ArrivalDriver.apply`) without waiting:
    /// callable from any thread (the control port's connection).
    func applyControl(_ state: ControlState, phase: Int) {
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index]
            loop.execute { driver.value.apply(state, phase: phase) }
        }
    }

    func stopArrivals() async { await onEveryLoop { driver, _ in driver.stop() } }

    func beginGracefulStop() async { await onEveryLoop { _, context in context.beginGracefulStop() } }

    func closeAll() async { await onEveryLoop { _, context in context.closeAll() } }

    func cancelTimeouts() async { await onEveryLoop { _, context in context.timeouts.cancelAll() } }

    /// Messages sent and not received: the ledger's count as of the last snapshot (`settled`) plus
    /// what the loops counted since.
    func messagesInFlight(settled: UInt64) async throws -> Int64 {
        var inFlight = Int64(settled)
        for (index, loop) in loops.enumerated() {
            let context = contexts[index]
            inFlight += try await loop.submit {
                Int64(context.value.recorder.count(.messagesSent)) - Int64(context.value.recorder.count(.messagesReceived))
            }.get()
        }
        return inFlight
    }

    /// What the probing session learned about the server (on whichever loop it ran).
    func serverFacts() async -> ServerFacts? {
        var facts: ServerFacts?
        for (index, loop) in loops.enumerated() {
            let context = contexts[index]
            if let learned = try? await loop.submit({ context.value.serverFacts }).get() {
                var merged = facts ?? ServerFacts()
                merged.merge(learned)
                facts = merged
            }
        }
        return facts
    }

    /// every loop's XEP-0202 clock samples.
    func clockSamples() async -> [ClockOffset.Sample] {
        var samples: [ClockOffset.Sample] = []
        for (index, loop) in loops.enumerated() {
            let context = contexts[index]
            samples += (try? await loop.submit({ context.value.clockSamples }).get()) ?? []
        }
        return samples
    }

    private func onEveryLoop(_ body: @escaping @Sendable (ArrivalDriver, LoopContext) -> Void) async {
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index]
            let context = contexts[index]
            try? await loop.submit { body(driver.value, context.value) }.get()
        }
    }
}
