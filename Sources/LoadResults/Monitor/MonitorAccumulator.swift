/// Sums `MonitorInterval`s up into a `MonitorSummary` as they come, keeping a few numbers per source
/// and per kept series (bounded by the scrape's series limit), never the intervals.
public struct MonitorAccumulator: Sendable {
    private struct ProcessTotals: Sendable {
        var name = ""
        var cpuSeconds = 0.0
        var seconds = 0.0
        var cpuMax = 0.0
        var usableCores = 1
        var cpuMaxOfUsable = 0.0
        var busiestThreadMax: Double?
        var rssStart: UInt64?
        var rssEnd: UInt64 = 0
        var rssMax: UInt64 = 0
        var fdsMax: Int?
        var threadsMax = 0

        mutating func add(_ sample: ProcessSample) {
            name = sample.name
            cpuSeconds += sample.cpuSeconds
            seconds += sample.seconds
            cpuMax = max(cpuMax, sample.cpuPercent)
            usableCores = max(usableCores, sample.usableCores)
            cpuMaxOfUsable = max(cpuMaxOfUsable, sample.cpuPercentOfUsable)
            if let busiest = sample.busiestThreadPercent { busiestThreadMax = max(busiestThreadMax ?? 0, busiest) }
            if rssStart == nil { rssStart = sample.rssBytes }
            rssEnd = sample.rssBytes
            rssMax = max(rssMax, sample.rssBytes)
            if let fds = sample.openFDs { fdsMax = max(fdsMax ?? 0, fds) }
            threadsMax = max(threadsMax, sample.threads)
        }

        var figures: MonitorSummary.ProcessFigures {
            MonitorSummary.ProcessFigures(
                name: name, cpuSeconds: cpuSeconds, cpuMeanPercent: seconds > 0 ? cpuSeconds / seconds * 100 : 0,
                cpuMaxPercent: cpuMax, usableCores: usableCores, cpuMaxPercentOfUsable: cpuMaxOfUsable,
                busiestThreadMaxPercent: busiestThreadMax, rssStartBytes: rssStart ?? 0, rssEndBytes: rssEnd,
                rssMaxBytes: rssMax, openFDsMax: fdsMax, threadsMax: threadsMax)
        }
    }

    private struct SeriesTotals: Sendable {
        var kind: MonitorSummary.SeriesFigures.Kind
        var intervals = 0
        var sum = 0.0
        var maximum = -Double.infinity
        var last: Double?
        var total = 0.0
        var seconds = 0.0

        var figures: MonitorSummary.SeriesFigures {
            switch kind {
            case .gauge:
                return .init(kind: kind, intervals: intervals, mean: intervals > 0 ? sum / Double(intervals) : 0, max: maximum, last: last)
            case .counter:
                return .init(kind: kind, intervals: intervals, mean: seconds > 0 ? total / seconds : 0, max: maximum, total: total)
            }
        }
    }

    private struct SourceTotals: Sendable {
        var kind: String
        var spec: String
        var intervals = 0
        var gaps = 0
        var gapReasons: [String: Int] = [:]
        var events: [MonitorEvent] = []
        var process: ProcessTotals?
        var series: [String: SeriesTotals] = [:]
    }

    /// Events kept per source (the first ones; a soak restarting every minute keeps the first 100).
    public static let maxEventsPerSource = 100

    private var totals: [String: SourceTotals] = [:]

    /// Starts with every source known, so a source that never answered still appears (all gaps).
    public init(sources: [MonitorSource]) {
        for source in sources { totals[source.label] = SourceTotals(kind: source.kind, spec: source.spec) }
    }

    public mutating func add(_ interval: MonitorInterval) {
        for (label, reading) in interval.sources {
            var source = totals[label] ?? SourceTotals(kind: reading.process != nil ? "process" : "prometheus", spec: label)
            source.intervals += 1
            switch reading {
            case .gap(let gap):
                source.gaps += 1
                source.gapReasons[gap.reason.rawValue, default: 0] += 1
            case .process(let sample):
                var process = source.process ?? ProcessTotals()
                process.add(sample)
                source.process = process
            case .series(let sample):
                for (key, value) in sample.gauges {
                    var series = source.series[key] ?? SeriesTotals(kind: .gauge)
                    series.intervals += 1
                    series.sum += value
                    series.maximum = max(series.maximum, value)
                    series.last = value
                    source.series[key] = series
                }
                if let seconds = sample.seconds, seconds > 0 {
                    for (key, increase) in sample.increases {
                        var series = source.series[key] ?? SeriesTotals(kind: .counter)
                        series.intervals += 1
                        series.total += increase
                        series.seconds += seconds
                        series.maximum = max(series.maximum, increase / seconds)
                        source.series[key] = series
                    }
                }
            }
            totals[label] = source
        }
        for event in interval.events ?? [] where totals[event.source] != nil {
            if totals[event.source]!.events.count < Self.maxEventsPerSource { totals[event.source]!.events.append(event) }
        }
    }

    /// The summary of everything added so far.
    public var summary: MonitorSummary {
        MonitorSummary(
            sources: totals.mapValues { source in
                MonitorSummary.Source(
                    kind: source.kind, spec: source.spec, intervals: source.intervals, gaps: source.gaps,
                    gapReasons: source.gapReasons.isEmpty ? nil : source.gapReasons,
                    events: source.events.isEmpty ? nil : source.events, process: source.process?.figures,
                    series: source.series.isEmpty ? nil : source.series.mapValues(\.figures))
            })
    }
}
