import Foundation

/// One or more results directories (several generators of one run) merged into one result:
/// interval i of every directory is merged into interval i (histograms and counters add), the
/// intervals are reduced to chart points as they are read (so memory does not grow with the run's
/// length), and the summary is rebuilt from the merged total.
///
/// Two ways in, one way through: `load(directories:)` reads what runs wrote; `init(directory:
/// manifest:summary:timeline:)` takes what a run holds in memory at its end. Both feed the same
/// `Timeline` and the same `init(directories:manifests:summaries:timeline:)`, so the report a run
/// renders at its end equals `xmppload report` on its directory.
public struct MergedResults: Sendable {
    public var directories: [String]
    public var manifests: [RunManifest]
    /// Per-interval values for charts.
    public var points: [IntervalPoint]
    /// The monitors' intervals, reduced (`--monitor`; empty without).
    public var monitor: MonitorTimeline
    /// Everything added up.
    public var total: IntervalSnapshot
    public var summary: RunSummary
    /// Why the directories' message ledgers could not be reconciled across generators (then `lost`
    /// is the sum of each generator's own count, which counts a message received by another
    /// generator as lost); nil when they were, or when a directory has no ledger (older files).
    public var ledgerProblem: SegmentLedger.MergeProblem?
    /// Each generator's clock against the server (XEP-0202), by its segment (`"i/N"`, or the summary's
    /// position when it has no ledger); generators that did not measure theirs are absent.
    public var clocks: [String: ClockOffset]

    /// Every generator's endpoint, one per results directory with a manifest: `host → server
    /// (segment i/N)`, so a merged report names all of them, not the first.
    public var endpoints: [String] { manifests.map(\.generatorEndpoint) }

    /// Metrics charted over time.
    public static let chartedMetrics = ["login", "message", "muc.message"]

    /// Merged intervals, in order, reduced as they come: chart points, the running total, generator
    /// health and the peak of live sessions. Memory grows by one small `IntervalPoint` per interval.
    public struct Timeline: Sendable {
        public private(set) var points: [IntervalPoint] = []
        public private(set) var total = IntervalSnapshot()
        public private(set) var healths: [GeneratorHealth] = []
        /// The largest `sessions_live` gauge seen (used when no summary gives peak concurrency).
        public private(set) var peakLive: Int64 = 0
        /// Outages found so far (`OutageFinder`, fed every interval).
        public private(set) var outageFinder = OutageFinder()
        /// The monitors' intervals, reduced (`MonitorTimeline`); empty without `--monitor`.
        public private(set) var monitor = MonitorTimeline()
        /// Each interval reduced to what the server's costs and the attribution read, per watched
        /// latency metric (`ServerSide.watchedMetrics`).
        public private(set) var loadPoints: [String: [LoadPoint]] = [:]

        /// `loadEnd`: seconds since the run's start when the load stopped, when known before the
        /// intervals are added (the final log-out is then not taken for an outage).
        public init(loadEnd: Double? = nil) { outageFinder.loadEnd = loadEnd }

        /// Starts the monitors' side with the run's sources (`--monitor`), so a source that never
        /// answered still shows.
        public init(loadEnd: Double? = nil, monitors: [MonitorSource]) {
            self.init(loadEnd: loadEnd)
            monitor = MonitorTimeline(sources: monitors)
        }

        /// Adds the next monitor interval (already merged across generators).
        public mutating func add(monitor interval: MonitorInterval) { monitor.add(interval) }

        /// Adds the next interval (already merged across loops or generators).
        public mutating func add(_ interval: IntervalSnapshot) {
            for metric in ServerSide.watchedMetrics { loadPoints[metric, default: []].append(LoadPoint(interval, metric: metric)) }
            outageFinder.add(interval)
            if let health = interval.health { healths.append(health) }
            peakLive = max(peakLive, interval.gauge(.live))
            points.append(IntervalPoint(interval))
            total.accumulate(interval)
        }
    }

    /// One run's result from memory, as its directory would give it: `manifest` and `summary` as
    /// written at the run's end, `timeline` fed every interval written to `intervals.jsonl`.
    public init(directory: String, manifest: RunManifest, summary: RunSummary, timeline: Timeline) {
        self.init(directories: [directory], manifests: [manifest], summaries: [summary], timeline: timeline)
    }

    /// Merges `timeline` (the intervals of every directory) with the directories' manifests and
    /// summaries (either may be missing for a directory: a run that crashed has no summary).
    /// Peak concurrency and final message losses come from the summaries when present.
    public init(directories: [String], manifests: [RunManifest], summaries: [RunSummary], timeline: Timeline) {
        let total = timeline.total
        let peak = summaries.isEmpty ? timeline.peakLive : summaries.reduce(Int64(0)) { $0 + $1.sessions.peakConcurrent }
        var ledger = total.ledger
        var reconciled: SegmentLedger?
        var ledgerProblem: SegmentLedger.MergeProblem?
        if summaries.count == directories.count {
            ledger = LedgerCounts(
                lost: summaries.reduce(0) { $0 + $1.messages.lost },
                duplicated: summaries.reduce(0) { $0 + $1.messages.duplicated },
                reordered: summaries.reduce(0) { $0 + $1.messages.reordered })
            // Several generators of one run: a message counts as lost only when no generator received
            // it (duplicates and order are judged by each receiver, so their sums stand).
            let ledgers = summaries.compactMap(\.ledger)
            if ledgers.count == summaries.count {
                do {
                    reconciled = try SegmentLedger.merged(ledgers)
                    if summaries.count > 1, let reconciled { ledger.lost = reconciled.lost }
                } catch {
                    ledgerProblem = error
                }
            }
        }
        let started = manifests.map(\.startedAt).min() ?? Date(timeIntervalSince1970: 0)
        let ended = manifests.compactMap(\.endedAt).max() ?? started.addingTimeInterval(total.end)
        let runIDs = Array(Set(manifests.map(\.runID))).sorted()
        summary = RunSummary(
            runID: runIDs.joined(separator: "+"),
            profile: Array(Set(manifests.flatMap { $0.profiles.map(\.name) })).sorted().joined(separator: "+"),
            startedAt: started, endedAt: ended,
            stopReason: summaries.first?.stopReason ?? manifests.first?.stopReason ?? "unknown",
            total: total, healths: timeline.healths, peakConcurrent: peak, ledger: ledger,
            descriptorLimits: Self.descriptorLimits(summaries))
        // One run's verdict (thresholds, findings, outcome) survives `report`; merged generators have none yet.
        if directories.count == 1, let only = summaries.first {
            (summary.thresholds, summary.findings, summary.verdict) = (only.thresholds, only.findings, only.verdict)
            summary.trendsNote = only.trendsNote
            summary.clock = only.clock
        }
        // The server's side: one run's as it judged it; merged generators' from the merged timeline.
        summary.monitors = timeline.monitor.summary
        if directories.count == 1, let only = summaries.first, only.limit != nil || only.serverCosts != nil {
            (summary.serverCosts, summary.limitedBy, summary.limit) = (only.serverCosts, only.limitedBy, only.limit)
        } else {
            summary.serverCosts = ServerSide.costs(timeline)
            let limit = ServerSide.attribution(timeline, latency: summary.latencyMilliseconds)
            (summary.limitedBy, summary.limit) = (limit.limitedBy.rawValue, limit)
        }
        summary.ledger = reconciled
        let controlEvents = summaries.flatMap { $0.controlEvents ?? [] }.sorted { $0.at < $1.at }
        summary.controlEvents = controlEvents.isEmpty ? nil : controlEvents
        var clocks: [String: ClockOffset] = [:]
        for (index, generator) in summaries.enumerated() {
            guard let clock = generator.clock else { continue }
            let name =
                generator.ledger.flatMap { ledger in
                    ledger.generator.map { "generator \($0)" } ?? ledger.segments.first.map { "\($0)/\(ledger.segmentCount)" }
                } ?? "#\(index + 1)"
            clocks[name] = clock
        }
        self.clocks = clocks
        self.ledgerProblem = ledgerProblem
        summary.analyseOutages(
            timeline: timeline, loadEnd: manifests.compactMap { $0.plannedLoad?.stopAfterSeconds }.max(),
            losses: summaries.count == directories.count && summaries.allSatisfy { $0.messages.lostWhenSent != nil }
                ? summaries.flatMap { $0.messages.lostWhenSent ?? [] } : nil)
        self.directories = directories
        self.manifests = manifests
        self.points = timeline.points
        self.monitor = timeline.monitor
        self.total = total
    }

    /// The generators' file-descriptor limits as their summaries recorded them (the lowest of each;
    /// nil when no summary has them), for the `fd-exhausted` hint.
    static func descriptorLimits(_ summaries: [RunSummary]) -> ConnectionHint.DescriptorLimits? {
        let soft = summaries.compactMap(\.generator.fdLimit).min()
        let hard = summaries.compactMap(\.generator.fdHardLimit).min()
        guard let soft, let hard else { return nil }
        return ConnectionHint.DescriptorLimits(soft: soft, hard: hard)
    }

    public static func load(directories: [String]) throws -> MergedResults {
        guard !directories.isEmpty else { throw ResultsError.noDirectories }
        var manifests: [RunManifest] = []
        var lines: [[Data]] = []
        var summaries: [RunSummary] = []
        for path in directories {
            let directory = ResultsDirectory(path: path)
            lines.append(try intervalLines(of: path))
            if let manifest = try? directory.readManifest() { manifests.append(manifest) }
            if let summary = try? directory.readSummary() { summaries.append(summary) }
        }
        var timeline = Timeline(loadEnd: manifests.compactMap { $0.plannedLoad?.stopAfterSeconds }.max(), monitors: monitorSources(manifests))
        for interval in merged(lines) { timeline.add(interval) }
        for interval in mergedMonitorIntervals(lines) { timeline.add(monitor: interval) }
        return MergedResults(directories: directories, manifests: manifests, summaries: summaries, timeline: timeline)
    }

    /// The intervals of several results directories (generators of one run), the k-th of each
    /// merged into one: what `load` builds its timeline from.
    public static func mergedIntervals(directories: [String]) throws -> [IntervalSnapshot] {
        merged(try directories.map(intervalLines(of:)))
    }

    /// The non-empty lines of a results directory's intervals.jsonl (`notAResultsDirectory` without one).
    private static func intervalLines(of path: String) throws -> [Data] {
        let file = ResultsDirectory(path: path).file(ResultsDirectory.intervalsFile)
        guard FileManager.default.fileExists(atPath: file) else { throw ResultsError.notAResultsDirectory(path) }
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        return data.split(separator: 0x0A).filter { !$0.isEmpty }.map { Data($0) }
    }

    /// The k-th load interval of every file merged. Lines that are not load intervals (control
    /// events, monitor intervals, a torn last line after a crash) are skipped before counting, so
    /// generators whose files interleave them differently still merge interval by interval.
    private static func merged(_ lines: [[Data]]) -> [IntervalSnapshot] {
        let files = lines.map { file in
            file.compactMap { line -> IntervalSnapshot? in
                // Monitor and control lines are told apart by their `event` key without a full decode.
                if line.range(of: Data("\"event\":".utf8)) != nil { return nil }
                return try? ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: line)
            }
        }
        var intervals: [IntervalSnapshot] = []
        let count = files.map(\.count).max() ?? 0
        for index in 0..<count {
            var merged: IntervalSnapshot?
            for file in files where index < file.count {
                if merged == nil { merged = file[index] } else { merged!.merge(file[index]) }
            }
            if let interval = merged { intervals.append(interval) }
        }
        return intervals
    }

    /// The k-th monitor interval of every file merged (`MonitorInterval.merge`: one server watched
    /// by several generators is one source, never a sum).
    private static func mergedMonitorIntervals(_ lines: [[Data]]) -> [MonitorInterval] {
        let files = lines.map { $0.compactMap { MonitorInterval.decode(line: $0) } }
        var intervals: [MonitorInterval] = []
        let count = files.map(\.count).max() ?? 0
        for index in 0..<count {
            var merged: MonitorInterval?
            for file in files where index < file.count {
                if merged == nil { merged = file[index] } else { merged!.merge(file[index]) }
            }
            if let interval = merged { intervals.append(interval) }
        }
        return intervals
    }

    /// The `--monitor` sources the manifests recorded (each label once), so a source that never
    /// answered still shows in the report.
    static func monitorSources(_ manifests: [RunManifest]) -> [MonitorSource] {
        var seen = Set<String>()
        return manifests.flatMap { MonitorSource.parseAll($0.settings?.monitors ?? []).sources }.filter { seen.insert($0.label).inserted }
    }
}

/// What charts need from one interval: rates, gauges, a few percentiles, errors, health.
public struct IntervalPoint: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var online: Int64
    public var connecting: Int64
    public var loginsPerSecond: Double
    public var messagesPerSecond: Double
    public var errors: UInt64
    public var errorsByKind: [String: UInt64]
    public var dropped: UInt64
    /// metric → (p50, p90, p99, max) in milliseconds.
    public var percentiles: [String: [Double]]
    public var health: GeneratorHealth?

    public init(_ interval: IntervalSnapshot) {
        start = interval.start
        end = interval.end
        let seconds = max(interval.end - interval.start, 0.001)
        online = interval.gauge(.online)
        connecting = interval.gauge(.connecting)
        loginsPerSecond = Double(interval.successfulLogins) / seconds
        messagesPerSecond = Double(interval.counter(.messagesReceived) + interval.counter(.groupchatReceived)) / seconds
        errors = interval.errorCount
        errorsByKind = interval.errors
        dropped = interval.counter(.droppedArrivals)
        var percentiles: [String: [Double]] = [:]
        for name in MergedResults.chartedMetrics {
            if let histogram = interval.latency[name] {
                percentiles[name] = [50, 90, 99].map { histogram.milliseconds(atPercentile: $0) } + [Double(histogram.maxMicroseconds) / 1000]
            }
        }
        self.percentiles = percentiles
        health = interval.health
    }
}

/// Why results could not be read.
public enum ResultsError: Error, CustomStringConvertible, Sendable {
    case noDirectories
    case notAResultsDirectory(String)

    public var description: String {
        switch self {
        case .noDirectories: return "no results directory given"
        case .notAResultsDirectory(let path): return "\(path) is not a results directory (no intervals.jsonl)"
        }
    }
}
