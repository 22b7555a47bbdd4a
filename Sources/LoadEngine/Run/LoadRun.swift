import Atomics
import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import XMPPCore

/// One load run, start to finish: event loops with their contexts and arrival drivers
/// (`RunLoops`), the interval collector, the stop sequence, the run's own judge, its results files,
/// its sinks and inputs.
///
/// Orchestration runs in structured concurrency (`run(judge:sinks:inputs:)`); the hot path stays on
/// the event loops as handlers and scheduled callbacks. Every 50 ms the run observes its loops and
/// asks its `RunStopSequence` what to do; at every interval's end it collects one snapshot, writes
/// it to `intervals.jsonl`, reduces it into the timeline it keeps for the summary (outages, the
/// report's charts), lets its `RunJudge` judge it (`--abort-on-fail`, a capacity step's collapse)
/// and hands it to each `RunSink` (the Prometheus endpoint, then the caller's). Ends when every
/// arrival was started and every session ended, when the plan's duration (or `--duration`) is
/// reached, or on `requestStop()` (SIGINT/SIGTERM, an input, or the judge); in the last two cases
/// sessions finish their current step and log out within the graceful-stop timeout, then whatever is
/// left is closed. Results gathered so far are always written, with the run's verdict.
public final class LoadRun: Sendable {
    public let configuration: RunConfiguration
    public let definition: RunDefinition
    public let plan: LoadPlan
    public let runID: String
    private let stopRequests = ManagedAtomic<Int>(0)
    /// The reason given with the first stop request (an index into `StopReason.allCases`; -1: none).
    private let requestedReason = ManagedAtomic<Int>(-1)

    /// How often the run observes its loops for the stop sequence.
    static let pollPeriod = Duration.milliseconds(50)

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

    /// The judge a run gets when none is given: no thresholds, the plan's own outcome.
    public var defaultJudge: RunJudge {
        RunJudge(evaluator: RunJudge.evaluator(plan: plan, definition: definition, segment: configuration.segment))
    }

    /// Runs to the end and returns what was written to `summary.json`, with the run's verdict.
    ///
    /// `judge` watches every interval and judges the run at its end (default: `defaultJudge`);
    /// `sinks` get every interval, notices and the run's end after the run's own Prometheus
    /// endpoint, in the order given (see `RunSink`); `inputs` steer the run while it goes (see
    /// `RunInput`). summary.json, the manifest and report.html are written once, verdict included.
    public func run(judge: RunJudge? = nil, sinks: [any RunSink] = [], inputs: [any RunInput] = []) async throws -> RunResult {
        let fdLimit = FileDescriptorLimit.raiseToHardLimit()
        // A profile whose `transport:` has no endpoint of the run: refused before anything starts.
        try RunEnvironment.checkTransports(of: configuration, definition: definition)
        // Names are resolved here, off the event loops; one that does not resolve fails the run.
        let endpoints = try await RunEnvironment.resolveEndpointsOffLoop(of: configuration, using: .system)
        let tls = try TLSSetup(domain: configuration.domain, insecure: configuration.insecure)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoops))
        do {
            let result = try await run(
                group: group, fdLimit: fdLimit, endpoints: endpoints, tls: tls, judge: judge ?? defaultJudge, sinks: sinks,
                inputs: inputs)
            try? await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func run(
        group: MultiThreadedEventLoopGroup, fdLimit: Int, endpoints: [SocketAddress], tls: TLSSetup, judge: RunJudge,
        sinks callerSinks: [any RunSink], inputs: [any RunInput]
    ) async throws -> RunResult {
        let clockOrigin = NIODeadline.now()
        let environment = RunEnvironment(
            configuration: configuration, runID: runID, server: endpoints[0], endpointAddresses: endpoints, tls: tls,
            definition: definition, seed: plan.seed, clockOrigin: clockOrigin)
        let refresh = EndpointRefresh.start(environment.resolvedEndpoints, every: configuration.endpointRefresh, using: environment.resolver)
        defer { refresh?.cancel() }
        let directory = ResultsDirectory(path: configuration.outputDirectory)
        try directory.create()
        let startedAt = Date()
        let manifest = makeManifest(startedAt: startedAt)
        try directory.writeManifest(manifest)
        let intervalLog = try IntervalLog(directory: directory)
        // The intervals reduced as they end: what the summary's outage analysis and the report need.
        let timeline = MergedResults.Timeline(loadEnd: manifest.plannedLoad?.stopAfterSeconds, monitors: configuration.monitors)
        // The server beside the load (`--monitor`): sampled on the intervals' grid, each source on a
        // thread of its own, never on the event loops; `take()` never blocks.
        let monitor = configuration.monitors.isEmpty ? nil : ServerMonitor(sources: configuration.monitors, interval: configuration.interval)

        let liveSessions = LiveSessionCounter()
        // Keep ~100 descriptors for the process itself (files, resolver, metrics endpoint).
        let loops = try await RunLoops.make(
            group: group, environment: environment, schedule: ArrivalSchedule(plan: plan),
            sessionCap: max(1, fdLimit - 100), liveSessions: liveSessions)
        let runStart = NIODeadline.now() + .milliseconds(50)
        loops.start(runStart: runStart)
        monitor?.start(origin: runStart)
        do {
            return try await run(
                group: group, environment: environment, directory: directory, startedAt: startedAt, manifest: manifest,
                intervalLog: intervalLog, timeline: timeline, loops: loops, liveSessions: liveSessions, runStart: runStart,
                clockOrigin: clockOrigin, monitor: monitor, judge: judge, sinks: callerSinks, inputs: inputs)
        } catch {
            // The monitor's threads end with the run, whatever ended it.
            _ = await monitor?.finish()
            throw error
        }
    }

    private func run(
        group: MultiThreadedEventLoopGroup, environment: RunEnvironment, directory: ResultsDirectory, startedAt: Date,
        manifest startingManifest: RunManifest, intervalLog: IntervalLog, timeline startingTimeline: MergedResults.Timeline, loops: RunLoops,
        liveSessions: LiveSessionCounter, runStart: NIODeadline, clockOrigin: NIODeadline, monitor: ServerMonitor?, judge startingJudge: RunJudge,
        sinks callerSinks: [any RunSink], inputs: [any RunInput]
    ) async throws -> RunResult {
        var judge = startingJudge
        var manifest = startingManifest
        var timeline = startingTimeline
        var sinks: [any RunSink] = []

        let metricsServer = try await configuration.metricsPort.asyncMap {
            try await MetricsHTTPServer.start(host: configuration.metricsHost, port: $0, group: group)
        }
        if let metricsServer { sinks.append(metricsServer.exporter) }
        sinks += callerSinks
        if let metricsServer {
            Self.tell(sinks, [.metricsEndpoint("http://\(configuration.metricsHost):\(metricsServer.port)/metrics")])
        }
        let steering = RunSteering(
            runStart: runStart, plan: plan, configuration: configuration, liveSessions: liveSessions,
            applyToLoops: { state, phase in loops.applyControl(state, phase: phase) },
            stop: { [self] reason in self.requestStop(reason: reason) })
        var started: [any RunInput] = []
        for input in inputs {
            do {
                let notice = try await input.start(steering: steering, group: group)
                started.append(input)
                if let notice { Self.tell(sinks, [notice]) }
            } catch {
                for input in started { await input.stop() }
                await metricsServer?.close()
                await loops.closeAll()
                throw error
            }
        }

        var collector = IntervalCollector(
            contexts: loops.contexts, loops: loops.loops, clockOrigin: clockOrigin,
            cpuAtStart: ProcessProbe.cpuSeconds())
        var sequence = RunStopSequence(
            loadEnd: plan.stopAfter, messageGrace: configuration.messageGrace,
            gracefulStop: plan.gracefulStop)
        var nextSnapshot = runStart + TimeAmount(configuration.interval)
        var heapRelease = HeapRelease()
        while !sequence.isDone {
            try await Task.sleep(for: Self.pollPeriod)
            recordChanges(steering, into: intervalLog, sinks: sinks)
            let now = NIODeadline.now()
            // After a wave of closed connections (a server restart), the freed pages go back to the
            // kernel before the reconnecting sessions fill them (HeapRelease: RSS steps otherwise).
            if heapRelease.observe(
                closed: environment.closedConnections.load(ordering: .relaxed), live: liveSessions.current,
                now: .nanoseconds((now - runStart).nanoseconds))
            {
                HeapRelease.releaseFreePages()
            }
            let inFlight =
                sequence.needsMessagesInFlight
                ? try await loops.messagesInFlight(settled: collector.ledger.outstanding) : 0
            let observation = RunStopSequence.Observation(
                now: .nanoseconds((now - runStart).nanoseconds), stopRequests: stopRequests.load(ordering: .relaxed),
                requestedReason: requestedStopReason, everyLoopIdle: loops.everyLoopIdle,
                messagesInFlight: inFlight, liveSessions: liveSessions.current)
            for action in sequence.observe(observation) {
                switch action {
                case .stopArrivals:
                    await loops.stopArrivals()
                case .beginGracefulStop:
                    steering.beganStopping()
                    Self.tell(sinks, [.stopping(reason: sequence.reason)])
                    await loops.beginGracefulStop()
                case .closeAll:
                    await loops.closeAll()
                case .finish:
                    break
                }
            }

            if now >= nextSnapshot || sequence.isDone {
                let snapshot = try await collector.collect(runStart: runStart, peakLive: liveSessions.peak)
                // The monitors' intervals complete by now (a slow scrape's comes with a later one).
                let monitored = monitor?.take() ?? []
                let interval = IntervalEnd(
                    snapshot: snapshot, cumulative: collector.cumulative,
                    elapsed: .nanoseconds(Int64(snapshot.end * 1e9)),
                    planned: plan.stopAfter, live: liveSessions.current, monitor: monitored)
                try intervalLog.append(snapshot)
                timeline.add(snapshot)
                for reading in monitored {
                    intervalLog.append(monitor: reading)
                    timeline.add(monitor: reading)
                }
                Self.tell(sinks, (monitor?.takeWarnings() ?? []).map(RunNotice.monitorWarning))
                steering.observed(snapshot)
                switch judge.observe(interval) {
                case .threshold(let failed):
                    Self.tell(sinks, [.thresholdFailed(failed)])
                    requestStop(reason: .thresholdsFailed)
                case .rule(let reason):
                    Self.tell(sinks, [.stopRuleFired(reason)])
                    requestStop(reason: .thresholdsFailed)
                case nil:
                    break
                }
                for sink in sinks { sink.intervalEnded(interval) }
                if let notice = intervalLog.takeNotice() { Self.tell(sinks, [notice]) }
                while nextSnapshot <= now { nextSnapshot = nextSnapshot + TimeAmount(configuration.interval) }
            }
        }
        await loops.cancelTimeouts()
        await metricsServer?.close()
        for input in started { await input.stop() }
        recordChanges(steering, into: intervalLog, sinks: sinks)
        // The monitors' last (partial) interval, then their threads stop.
        if let monitor {
            for reading in await monitor.finish(at: NIODeadline.now()) {
                intervalLog.append(monitor: reading)
                timeline.add(monitor: reading)
            }
            Self.tell(sinks, monitor.takeWarnings().map(RunNotice.monitorWarning))
        }

        let ledger = collector.finishLedger()
        let endedAt = Date()
        var summary = RunSummary(
            runID: runID, profile: manifest.profiles.map(\.name).joined(separator: "+"),
            startedAt: startedAt, endedAt: endedAt, stopReason: sequence.reason.rawValue,
            total: collector.cumulative, healths: collector.healths,
            peakConcurrent: collector.peakConcurrent, ledger: ledger)
        // Sends and receipts per sender segment, so `report` reconciles generators.
        summary.ledger = SegmentLedger(
            segment: configuration.segment.index, of: configuration.segment.count, sent: collector.ledger.sent,
            receivedBySender: collector.ledger.distinctReceiptsBySender, generator: configuration.generatorKey)
        summary.clock = ClockOffset.estimate(await loops.clockSamples())
        // Outages, lost messages inside vs outside them and RSS over the load's end, from the intervals
        // reduced as they came (nothing is read back).
        summary.messages.lostWhenSent = collector.lossClock.finish()
        summary.analyseOutages(
            timeline: timeline, loadEnd: manifest.plannedLoad?.stopAfterSeconds, losses: summary.messages.lostWhenSent)
        let changes = steering.events
        if !changes.isEmpty { summary.controlEvents = changes }
        summary.intervalWrites = intervalLog.failures(flushing: true)
        summary.monitors = timeline.monitor.summary
        summary.serverCosts = ServerSide.costs(timeline)
        let verdict = judge.verdict(of: summary, timeline: timeline)
        summary.apply(verdict)
        summary.noteSteering()
        // summary.json first: it is small and is what a full disk must not cost.
        try directory.writeSummary(summary)
        manifest.endedAt = endedAt
        manifest.serverFacts = await loops.serverFacts()
        manifest.stopReason = summary.stopReason
        manifest.appliedLoad = AppliedLoad(summary)
        try directory.writeManifest(manifest)
        // report.html (and forensics.json) from memory: the same values and code `xmppload report DIR`
        // uses after reading the directory back, so both give the same report.
        let results = MergedResults(directory: directory.path, manifest: manifest, summary: summary, timeline: timeline)
        try directory.writeForensics(results.total.forensics)
        try directory.writeReport(HTMLReport.render(results))
        let end = RunEnd(summary: summary, verdict: verdict, manifest: manifest, directory: directory, timeline: timeline)
        for sink in sinks { sink.runEnded(end) }
        return RunResult(summary: summary, verdict: verdict)
    }

    /// Writes the changes inputs made since the last call to `intervals.jsonl` and tells the sinks.
    private func recordChanges(_ steering: RunSteering, into log: IntervalLog, sinks: [any RunSink]) {
        for change in steering.takeNewEvents() {
            log.append(change)
            Self.tell(sinks, [.controlChanged(change)])
        }
    }

    /// Passes each of `notices` to every sink, in order.
    private static func tell(_ sinks: [any RunSink], _ notices: [RunNotice]) {
        for notice in notices { for sink in sinks { sink.notice(notice) } }
    }

    private func makeManifest(startedAt: Date) -> RunManifest {
        var manifest = RunManifest(
            runID: runID,
            profiles: definition.profiles.map {
                RunManifest.ProfileReference(
                    name: $0.profile.name, path: $0.path,
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
