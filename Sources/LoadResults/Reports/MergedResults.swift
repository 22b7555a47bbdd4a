import Foundation

/// One or more results directories (several generators of one run) merged into one result:
/// interval i of every directory is merged into interval i (histograms and counters add), the
/// intervals are reduced to chart points as they are read (so memory does not grow with the run's
/// length), and the summary is rebuilt from the merged total.
public struct MergedResults: Sendable {
    public var directories: [String]
    public var manifests: [RunManifest]
    /// Per-interval values for charts.
    public var points: [IntervalPoint]
    /// Everything added up.
    public var total: IntervalSnapshot
    public var summary: RunSummary

    /// Metrics charted over time.
    public static let chartedMetrics = ["login", "message", "muc.message"]

    public static func load(directories: [String]) throws -> MergedResults {
        guard !directories.isEmpty else { throw ResultsError.noDirectories }
        var manifests: [RunManifest] = []
        var lines: [[Data]] = []
        var summaries: [RunSummary] = []
        for path in directories {
            let directory = ResultsDirectory(path: path)
            guard FileManager.default.fileExists(atPath: directory.file(ResultsDirectory.intervalsFile)) else {
                throw ResultsError.notAResultsDirectory(path)
            }
            if let manifest = try? directory.readManifest() { manifests.append(manifest) }
            if let summary = try? directory.readSummary() { summaries.append(summary) }
            let data = try Data(contentsOf: URL(fileURLWithPath: directory.file(ResultsDirectory.intervalsFile)))
            lines.append(data.split(separator: 0x0A).filter { !$0.isEmpty }.map { Data($0) })
        }
        var total = IntervalSnapshot()
        var points: [IntervalPoint] = []
        var healths: [GeneratorHealth] = []
        var peakLive: Int64 = 0
        let count = lines.map(\.count).max() ?? 0
        for index in 0..<count {
            var merged: IntervalSnapshot?
            for file in lines where index < file.count {
                // A torn last line (crash, kill -9) is skipped.
                guard let snapshot = try? ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: file[index]) else { continue }
                if merged == nil { merged = snapshot } else { merged!.merge(snapshot) }
            }
            guard let interval = merged else { continue }
            if let health = interval.health { healths.append(health) }
            peakLive = max(peakLive, interval.gauge("sessions_live"))
            points.append(IntervalPoint(interval))
            total.accumulate(interval)
        }
        // Peak concurrency and final message losses come from the runs' own summaries when present.
        let peak = summaries.isEmpty ? peakLive : summaries.reduce(Int64(0)) { $0 + $1.sessions.peakConcurrent }
        var ledger = total.ledger
        if summaries.count == directories.count {
            ledger = LedgerCounts(lost: summaries.reduce(0) { $0 + $1.messages.lost },
                                  duplicated: summaries.reduce(0) { $0 + $1.messages.duplicated },
                                  reordered: summaries.reduce(0) { $0 + $1.messages.reordered })
        }
        let started = manifests.map(\.startedAt).min() ?? Date(timeIntervalSince1970: 0)
        let ended = manifests.compactMap(\.endedAt).max() ?? started.addingTimeInterval(total.end)
        let runIDs = Array(Set(manifests.map(\.runID))).sorted()
        var summary = RunSummary(runID: runIDs.joined(separator: "+"),
                                 profile: Array(Set(manifests.flatMap { $0.profiles.map(\.name) })).sorted().joined(separator: "+"),
                                 startedAt: started, endedAt: ended,
                                 stopReason: summaries.first?.stopReason ?? manifests.first?.stopReason ?? "unknown",
                                 total: total, healths: healths, peakConcurrent: peak, ledger: ledger)
        // One run's verdict (thresholds, findings, outcome) survives `report`; merged generators have none yet.
        if directories.count == 1, let only = summaries.first {
            (summary.thresholds, summary.findings, summary.verdict) = (only.thresholds, only.findings, only.verdict)
        }
        return MergedResults(directories: directories, manifests: manifests, points: points, total: total, summary: summary)
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
        online = interval.gauge("sessions_online")
        connecting = interval.gauge("sessions_connecting")
        loginsPerSecond = Double(interval.counter(.sessionsLoggedIn)) / seconds
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
