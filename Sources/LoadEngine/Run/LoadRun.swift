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

    public init(configuration: RunConfiguration, definition: RunDefinition, plan: LoadPlan, runID: String? = nil) {
        self.configuration = configuration
        self.definition = definition
        self.plan = plan
        self.runID = runID ?? RunIdentifier.make()
    }

    /// Asks the run to stop: the first call stops gracefully, the second closes everything at once.
    public func requestStop() {
        stopRequests.wrappingIncrement(ordering: .relaxed)
    }

    /// Runs to the end and returns the summary that was written to `summary.json`.
    public func run(progress: @escaping @Sendable (ProgressEvent) -> Void = { _ in }) async throws -> RunSummary {
        let fdLimit = FileDescriptorLimit.raiseToHardLimit()
        let server = try SocketAddress.makeAddressResolvingHost(configuration.host, port: configuration.port)
        let tls = try TLSSetup(domain: configuration.domain, insecure: configuration.insecure)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoops))
        defer { try? group.syncShutdownGracefully() }

        let clockOrigin = NIODeadline.now()
        let environment = RunEnvironment(configuration: configuration, runID: runID, server: server, tls: tls,
                                         definition: definition, seed: plan.seed, clockOrigin: clockOrigin)
        let output = try ResultsWriter(directory: configuration.outputDirectory)
        let startedAt = Date()
        var manifest = RunManifest.make(runID: runID, definition: definition, plan: plan,
                                        configuration: configuration, startedAt: startedAt)
        try output.writeManifest(manifest)

        let loops = group.makeIterator().map { $0 }
        let schedule = ArrivalSchedule(plan: plan)
        let liveSessions = ManagedAtomic<Int>(0)
        let serials = ManagedAtomic<Int>(0)
        let idleLoops = ManagedAtomic<Int>(0)
        // Keep ~200 descriptors for the process itself (files, metrics endpoint, resolver).
        let sessionCap = max(1, fdLimit - 200)
        let runStart = NIODeadline.now() + .milliseconds(50)

        var contexts: [NIOLoopBound<LoopContext>] = []
        var drivers: [NIOLoopBound<ArrivalDriver>] = []
        for (index, loop) in loops.enumerated() {
            let pair = try await loop.submit {
                let context = LoopContext(eventLoop: loop, environment: environment, loopIndex: index)
                let driver = ArrivalDriver(context: context, schedule: schedule, runStart: runStart,
                                           loopCount: loops.count, sessionCap: sessionCap,
                                           liveSessions: liveSessions, serials: serials)
                driver.onIdle = { idleLoops.wrappingIncrement(ordering: .relaxed) }
                LoopLagProbe.start(on: loop, context: context)
                driver.start()
                return (NIOLoopBound(context, eventLoop: loop), NIOLoopBound(driver, eventLoop: loop))
            }.get()
            contexts.append(pair.0)
            drivers.append(pair.1)
        }

        let metricsServer = try await startMetricsEndpoint(group: group)
        defer { try? metricsServer?.close() }

        var collector = IntervalCollector(contexts: contexts, loops: loops, registry: environment.registry,
                                          clockOrigin: clockOrigin, cpuAtStart: ProcessProbe.cpuSeconds())
        let loadEnd = runStart + TimeAmount(plan.totalDuration)
        var nextSnapshot = runStart + TimeAmount(configuration.interval)
        var phase = RunPhase.load
        var graceDeadline: NIODeadline?
        var stopReason = "completed"

        while true {
            try await Task.sleep(for: .milliseconds(100))
            let now = NIODeadline.now()
            let signals = stopRequests.load(ordering: .relaxed)

            if phase == .load {
                if signals > 0 || now >= loadEnd {
                    stopReason = signals > 0 ? "interrupted" : "duration"
                    phase = .stopping
                    graceDeadline = now + TimeAmount(plan.gracefulStop)
                    progress(.stopping(reason: stopReason))
                    await Self.onEveryLoop(loops, drivers, contexts) { driver, context in
                        driver.stop()
                        context.beginGracefulStop()
                    }
                } else if idleLoops.load(ordering: .relaxed) >= loops.count {
                    phase = .done
                }
            } else if phase == .stopping {
                let live = liveSessions.load(ordering: .relaxed)
                if live == 0 {
                    phase = .done
                } else if signals > 1 || now >= graceDeadline! {
                    await Self.onEveryLoop(loops, drivers, contexts) { _, context in context.closeAll() }
                    phase = .done
                }
            }

            if now >= nextSnapshot || phase == .done {
                let snapshot = try await collector.collect(final: phase == .done)
                try output.appendInterval(snapshot)
                metricsServer?.exporter.update(with: collector.cumulative)
                progress(.interval(snapshot, cumulative: collector.cumulative, elapsed: now - runStart,
                                   planned: plan.totalDuration, liveSessions: liveSessions.load(ordering: .relaxed)))
                nextSnapshot = nextSnapshot + TimeAmount(configuration.interval)
                while nextSnapshot <= now { nextSnapshot = nextSnapshot + TimeAmount(configuration.interval) }
            }
            if phase == .done { break }
        }

        // Messages still in flight get a grace period before they count as lost.
        collector.finishLedger()
        let endedAt = Date()
        manifest.endedAt = endedAt
        manifest.stopReason = stopReason
        try output.writeManifest(manifest)
        let summary = collector.summary(runID: runID, startedAt: startedAt, endedAt: endedAt, stopReason: stopReason)
        try output.writeSummary(summary)
        try output.writeReport(summary: summary, manifest: manifest)
        return summary
    }

    private enum RunPhase { case load, stopping, done }

    private static func onEveryLoop(_ loops: [any EventLoop], _ drivers: [NIOLoopBound<ArrivalDriver>],
                                    _ contexts: [NIOLoopBound<LoopContext>],
                                    _ body: @escaping @Sendable (ArrivalDriver, LoopContext) -> Void) async {
        for (index, loop) in loops.enumerated() {
            let driver = drivers[index]
            let context = contexts[index]
            try? await loop.submit { body(driver.value, context.value) }.get()
        }
    }

    private func startMetricsEndpoint(group: MultiThreadedEventLoopGroup) async throws -> MetricsEndpoint? {
        guard let port = configuration.metricsPort else { return nil }
        return try await MetricsEndpoint.start(host: configuration.metricsHost, port: port, group: group, runID: runID)
    }
}

/// What the run reports while it goes, for the console.
public enum ProgressEvent: Sendable {
    case interval(IntervalSnapshot, cumulative: IntervalSnapshot, elapsed: TimeAmount, planned: Duration, liveSessions: Int)
    case stopping(reason: String)
}

/// Run identifiers: sortable wall-clock prefix plus randomness, safe in file names and stamps.
public enum RunIdentifier {
    public static func make() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(formatter.string(from: Date()))-\(suffix)"
    }
}
