import Atomics
import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import XMPPCore

/// One load run, start to finish: event loops, per-loop contexts and arrival drivers, the interval
/// collector, graceful stop, and the results directory.
///
/// Orchestration runs in structured concurrency (`run()`); the hot path stays on the event loops as
/// handlers and scheduled callbacks. Ends when every arrival was started and every session ended,
/// when the plan's duration (or `--duration`) is reached, or on `requestStop()` (SIGINT/SIGTERM);
/// in the last two cases sessions finish their current step and log out within the graceful-stop
/// timeout, then whatever is left is closed. Results gathered so far are always written.
public final class LoadRun: Sendable {
    public let configuration: RunConfiguration
    public let definition: RunDefinition
    public let plan: LoadPlan
    public let runID: String
    private let stopRequests = ManagedAtomic<Int>(0)
    /// The reason given with the first stop request (an index into `StopReason.allCases`; -1: none).
    private let requestedReason = ManagedAtomic<Int>(-1)

    public init(configuration: RunConfiguration, definition: RunDefinition, plan: LoadPlan, runID: String? = nil) {
        self.configuration = configuration
        self.definition = definition
        self.plan = plan
        self.runID = runID ?? RunIdentifier.make()
    }

    /// Asks the run to stop: the first call stops gracefully, the second closes everything at once.
    /// The first call's `reason` becomes the run's stop reason. Callable from any thread.
    public func requestStop(reason: StopReason = .interrupted) {
        let index = StopReason.allCases.firstIndex(of: reason) ?? 0
        _ = requestedReason.compareExchange(expected: -1, desired: index, ordering: .relaxed)
        stopRequests.wrappingIncrement(ordering: .relaxed)
    }

    /// The reason given with the first `requestStop`, if any.
    private var requestedStopReason: StopReason {
        let index = requestedReason.load(ordering: .relaxed)
        return index >= 0 ? StopReason.allCases[index] : .interrupted
    }

    /// Runs to the end and returns the summary that was written to `summary.json`.
    public func run(progress: @escaping @Sendable (ProgressEvent) -> Void = { _ in }) async throws -> RunSummary {
        let fdLimit = FileDescriptorLimit.raiseToHardLimit()
        let server = try SocketAddress.makeAddressResolvingHost(configuration.host, port: configuration.port)
        let tls = try TLSSetup(domain: configuration.domain, insecure: configuration.insecure)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoops))
        do {
            let summary = try await run(group: group, fdLimit: fdLimit, server: server, tls: tls, progress: progress)
            try? await group.shutdownGracefully()
            return summary
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func run(group: MultiThreadedEventLoopGroup, fdLimit: Int, server: SocketAddress, tls: TLSSetup,
                     progress: @escaping @Sendable (ProgressEvent) -> Void) async throws -> RunSummary {

        let clockOrigin = NIODeadline.now()
        let environment = RunEnvironment(configuration: configuration, runID: runID, server: server, tls: tls,
                                         definition: definition, seed: plan.seed, clockOrigin: clockOrigin)
        let output = ResultsDirectory(path: configuration.outputDirectory)
        try output.create()
        let startedAt = Date()
        var manifest = makeManifest(startedAt: startedAt)
        try output.writeManifest(manifest)
        let intervalLog = try IntervalLogWriter(directory: output)

        let loops = group.makeIterator().map { $0 }
        let schedule = ArrivalSchedule(plan: plan)
        let liveSessions = LiveSessionCounter()
        let serials = ManagedAtomic<Int>(0)
        let idleLoops = ManagedAtomic<Int>(0)
        // Keep ~100 descriptors for the process itself (files, resolver, metrics endpoint).
        let sessionCap = max(1, fdLimit - 100)

        var contexts: [NIOLoopBound<LoopContext>] = []
        var drivers: [NIOLoopBound<ArrivalDriver>] = []
        for (index, loop) in loops.enumerated() {
            let pair = try await loop.submit {
                let context = LoopContext(eventLoop: loop, environment: environment, loopIndex: index)
                let driver = ArrivalDriver(context: context, schedule: schedule, loopCount: loops.count,
                                           sessionCap: sessionCap, liveSessions: liveSessions, serials: serials)
                driver.onIdle = { idleLoops.wrappingIncrement(ordering: .relaxed) }
                return (NIOLoopBound(context, eventLoop: loop), NIOLoopBound(driver, eventLoop: loop))
            }.get()
            contexts.append(pair.0)
            drivers.append(pair.1)
        }
        // Every loop is set up: start all drivers in one synchronous pass, so no loop starts late
        // because this task waited for a thread between two loops.
        let runStart = NIODeadline.now() + .milliseconds(50)
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index], context = contexts[index]
            loop.execute {
                LoopLagProbe.start(on: loop, context: context.value)
                driver.value.start(runStart: runStart)
            }
        }

        let metricsServer = try await configuration.metricsPort.asyncMap {
            try await MetricsHTTPServer.start(host: configuration.metricsHost, port: $0, group: group)
        }
        if let metricsServer { progress(.metricsEndpoint("http://\(configuration.metricsHost):\(metricsServer.port)/metrics")) }

        var collector = IntervalCollector(contexts: contexts, loops: loops, clockOrigin: clockOrigin,
                                          cpuAtStart: ProcessProbe.cpuSeconds())
        let loadEnd = plan.stopAfter.map { runStart + TimeAmount($0) }
        var nextSnapshot = runStart + TimeAmount(configuration.interval)
        var phase = RunPhase.load
        var graceDeadline = NIODeadline.distantFuture
        var stopReason = StopReason.completed

        while true {
            try await Task.sleep(for: .milliseconds(50))
            let now = NIODeadline.now()
            let signals = stopRequests.load(ordering: .relaxed)

            switch phase {
            case .load:
                if signals > 0 {
                    stopReason = requestedStopReason
                    phase = .stopping
                    graceDeadline = now + TimeAmount(plan.gracefulStop)
                    progress(.stopping(reason: stopReason.rawValue))
                    await Self.onEveryLoop(loops, drivers, contexts) { driver, context in
                        driver.stop()
                        context.beginGracefulStop()
                    }
                } else if loadEnd.map({ now >= $0 }) ?? false {
                    // No more arrivals; sessions stay online until the messages in flight arrived or
                    // the message grace period ended, so a late message is late, not lost.
                    stopReason = .duration
                    phase = .draining(until: now + TimeAmount(configuration.messageGrace))
                    await Self.onEveryLoop(loops, drivers, contexts) { driver, _ in driver.stop() }
                } else if idleLoops.load(ordering: .relaxed) >= loops.count {
                    phase = .done
                }
            case .draining(let until):
                let inFlight = try await Self.messagesInFlight(loops, contexts, settled: collector.ledger.outstanding)
                if signals > 0 || now >= until || inFlight == 0 {
                    phase = .stopping
                    graceDeadline = now + TimeAmount(plan.gracefulStop)
                    progress(.stopping(reason: stopReason.rawValue))
                    await Self.onEveryLoop(loops, drivers, contexts) { _, context in context.beginGracefulStop() }
                }
            case .stopping:
                if liveSessions.current == 0 {
                    phase = .done
                } else if signals > 1 || now >= graceDeadline {
                    await Self.onEveryLoop(loops, drivers, contexts) { _, context in context.closeAll() }
                    phase = .done
                }
            case .done:
                break
            }

            if now >= nextSnapshot || phase == .done {
                let snapshot = try await collector.collect(runStart: runStart, peakLive: liveSessions.peak)
                try intervalLog.append(snapshot)
                metricsServer?.exporter.update(interval: snapshot, cumulative: collector.cumulative)
                progress(.interval(snapshot, cumulative: collector.cumulative,
                                   elapsed: .nanoseconds(Int64((snapshot.end) * 1e9)),
                                   planned: plan.stopAfter, live: liveSessions.current))
                while nextSnapshot <= now { nextSnapshot = nextSnapshot + TimeAmount(configuration.interval) }
            }
            if phase == .done { break }
        }
        await Self.onEveryLoop(loops, drivers, contexts) { _, context in context.timeouts.cancelAll() }

        await metricsServer?.close()
        let ledger = collector.finishLedger()
        let endedAt = Date()
        manifest.endedAt = endedAt
        manifest.stopReason = stopReason.rawValue
        try output.writeManifest(manifest)
        let summary = RunSummary(runID: runID, profile: manifest.profiles.map(\.name).joined(separator: "+"),
                                 startedAt: startedAt, endedAt: endedAt, stopReason: stopReason.rawValue,
                                 total: collector.cumulative, healths: collector.healths,
                                 peakConcurrent: collector.peakConcurrent, ledger: ledger)
        try output.writeSummary(summary)
        manifest.appliedLoad = AppliedLoad(summary)
        try output.writeManifest(manifest)
        try output.writeReport(HTMLReport.render(try MergedResults.load(directories: [output.path])))
        return summary
    }

    private func makeManifest(startedAt: Date) -> RunManifest {
        var manifest = RunManifest(runID: runID,
                    profiles: definition.profiles.map {
                        RunManifest.ProfileReference(name: $0.profile.name, path: $0.path,
                                                     sha256: Digest.sha256Hex($0.bytes), weight: $0.weight,
                                                     text: String(decoding: $0.bytes, as: UTF8.self))
                    },
                    server: "\(configuration.host):\(configuration.port)", domain: configuration.domain,
                    accounts: "\(configuration.accountPrefix)\(configuration.accounts.lowerBound)-\(configuration.accounts.upperBound)",
                    tls: configuration.tls?.rawValue ?? "profile", loadModel: plan.summary, seed: plan.seed,
                    segment: configuration.segment.description, commandLine: configuration.commandLine, startedAt: startedAt,
                    intervalSeconds: configuration.interval.seconds)
        manifest.label = configuration.label
        manifest.tags = configuration.tags
        manifest.settings = configuration.recordedSettings
        manifest.plannedLoad = plan.recordedPlan
        return manifest
    }

    private enum RunPhase: Equatable { case load, draining(until: NIODeadline), stopping, done }

    /// Messages sent and not received: the ledger's count as of the last snapshot plus what the loops
    /// counted since.
    private static func messagesInFlight(_ loops: [any EventLoop], _ contexts: [NIOLoopBound<LoopContext>],
                                         settled: UInt64) async throws -> Int64 {
        var inFlight = Int64(settled)
        for (index, loop) in loops.enumerated() {
            let context = contexts[index]
            inFlight += try await loop.submit {
                Int64(context.value.recorder.count(.messagesSent)) - Int64(context.value.recorder.count(.messagesReceived))
            }.get()
        }
        return inFlight
    }

    private static func onEveryLoop(_ loops: [any EventLoop], _ drivers: [NIOLoopBound<ArrivalDriver>],
                                    _ contexts: [NIOLoopBound<LoopContext>],
                                    _ body: @escaping @Sendable (ArrivalDriver, LoopContext) -> Void) async {
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index]
            let context = contexts[index]
            try? await loop.submit { body(driver.value, context.value) }.get()
        }
    }

}

/// What the run reports while it goes, for the console.
public enum ProgressEvent: Sendable {
    /// An interval ended: its snapshot, the run so far, time since start, the planned load duration
    /// (nil: until every session finished) and sessions alive now.
    case interval(IntervalSnapshot, cumulative: IntervalSnapshot, elapsed: Duration, planned: Duration?, live: Int)
    case stopping(reason: String)
    /// The Prometheus endpoint is serving at this URL.
    case metricsEndpoint(String)
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

/// Run identifiers: sortable wall-clock prefix plus randomness, safe in file names and stamps.
public enum RunIdentifier {
    public static func make() -> String {
        "\(timestamp())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
    }

    /// `yyyyMMdd-HHmmss` in UTC.
    public static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: Date())
    }
}
