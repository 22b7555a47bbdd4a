import Foundation

/// One results directory read for `compare`: its manifest and outcome (when present) and its
/// intervals as `MeasuredUnit`s, read line by line so memory holds compact buckets, not dense
/// histograms. A torn last line is skipped, as everywhere.
///
/// Message losses become final only when the run ends (the ledger's last pass): whatever the
/// summary counts beyond what the intervals reported is added to the last interval.
public struct MeasuredRun: Sendable {
    public var directory: String
    public var manifest: RunManifest?
    /// From `summary.json`; nil when the run wrote none (it did not complete).
    public var outcome: SummaryOutcome?
    public var intervals: [MeasuredUnit]

    public init(directory: String, manifest: RunManifest?, outcome: SummaryOutcome?, intervals: [MeasuredUnit]) {
        self.directory = directory
        self.manifest = manifest
        self.outcome = outcome
        self.intervals = intervals
    }

    public static func load(directory path: String) throws -> MeasuredRun {
        let directory = ResultsDirectory(path: path)
        let intervalsPath = directory.file(ResultsDirectory.intervalsFile)
        guard FileManager.default.fileExists(atPath: intervalsPath) else { throw ResultsError.notAResultsDirectory(path) }
        let manifest = try? directory.readManifest()
        let outcome = try? ResultsDirectory.decoder.decode(
            SummaryOutcome.self, from: Data(contentsOf: URL(fileURLWithPath: directory.file(ResultsDirectory.summaryFile))))
        let data = try Data(contentsOf: URL(fileURLWithPath: intervalsPath))
        var intervals: [MeasuredUnit] = []
        for line in data.split(separator: 0x0A) where !line.isEmpty {
            guard let snapshot = try? ResultsDirectory.decoder.decode(IntervalSnapshot.self, from: Data(line)) else { continue }
            intervals.append(MeasuredUnit(snapshot))
        }
        if let outcome, !intervals.isEmpty {
            let counted = intervals.reduce(0) { $0 + $1.messagesLost }
            if outcome.messagesLost > counted { intervals[intervals.count - 1].messagesLost += outcome.messagesLost - counted }
        }
        return MeasuredRun(directory: path, manifest: manifest, outcome: outcome, intervals: intervals)
    }

    /// The whole run as one unit.
    public var total: MeasuredUnit {
        intervals.reduce(into: MeasuredUnit()) { $0.add($1) }
    }

    /// How to name the run in reports: its label, else its directory.
    public var name: String { manifest?.label ?? directory }
}
