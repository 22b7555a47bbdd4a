/// The monitors' side of a run's timeline: every `MonitorInterval` summed up (`MonitorAccumulator`)
/// and kept *reduced*, so a soak of thousands of intervals stays small and the report, the costs and
/// the attribution read the same values whether a run holds them in memory or `report` reads them
/// back from intervals.jsonl.
///
/// Reduction: a process sample is kept whole (a few dozen numbers); a scrape keeps only the series
/// the attribution reads (`node_netstat_TcpExt_Listen*`) and at most `maxChartedSeries` others per
/// source, chosen at the source's first successful scrape (the listed families first, then by name)
/// and kept for the run, so charts do not churn. Gaps and events are kept as they are. Memory: one
/// reduced interval per interval — per source a process sample or ≤ `maxChartedSeries` + 2 numbers.
public struct MonitorTimeline: Sendable {
    /// Most series of one source kept for charts.
    public static let maxChartedSeries = 16
    /// Series kept whatever the chart choice, because the attribution reads them.
    public static let attributionPrefixes = ["node_netstat_TcpExt_ListenOverflows", "node_netstat_TcpExt_ListenDrops"]
    /// Families charted before others when a source has more than `maxChartedSeries` series.
    static let preferredPrefixes = [
        "sum by (mode) (node_cpu_seconds_total)", "node_load1", "node_memory_MemAvailable_bytes", "node_netstat_TcpExt_Listen",
        "node_netstat_Tcp_CurrEstab", "node_netstat_Tcp_PassiveOpens", "prosody_mod_c2s__connections", "process_cpu_seconds_total",
        "process_resident_memory_bytes", "process_open_fds",
    ]

    /// The intervals, reduced, in the order added.
    public private(set) var intervals: [MonitorInterval] = []
    private var accumulator: MonitorAccumulator
    /// Per source label: the series kept for charts (fixed at its first scrape).
    public private(set) var charted: [String: [String]] = [:]
    /// Series of a source left out of the charts (they are in intervals.jsonl).
    public private(set) var unchartedCount: [String: Int] = [:]
    private var known: Set<String>

    /// `sources`: the run's monitors (a source that never answered still appears in the summary).
    public init(sources: [MonitorSource] = []) {
        accumulator = MonitorAccumulator(sources: sources)
        known = Set(sources.map(\.label))
    }

    /// True when there is nothing to show: no monitor given and none seen.
    public var isEmpty: Bool { known.isEmpty && intervals.isEmpty }

    /// Every source label seen or given, sorted.
    public var labels: [String] { known.sorted() }

    /// The summary of everything added (nil when there was no monitor).
    public var summary: MonitorSummary? { isEmpty ? nil : accumulator.summary }

    public mutating func add(_ interval: MonitorInterval) {
        accumulator.add(interval)
        var reduced = interval
        for (label, reading) in interval.sources {
            known.insert(label)
            guard case .series(var sample) = reading else { continue }
            if charted[label] == nil {
                let keys = Set(sample.gauges.keys).union(sample.increases.keys)
                let ordered = keys.sorted { Self.rank($0) == Self.rank($1) ? $0 < $1 : Self.rank($0) < Self.rank($1) }
                charted[label] = Array(ordered.prefix(Self.maxChartedSeries))
                unchartedCount[label] = max(0, ordered.count - Self.maxChartedSeries)
            }
            let keep = Set(charted[label] ?? [])
            func kept(_ key: String) -> Bool { keep.contains(key) || Self.attributionPrefixes.contains { key.hasPrefix($0) } }
            sample.gauges = sample.gauges.filter { kept($0.key) }
            sample.increases = sample.increases.filter { kept($0.key) }
            reduced.sources[label] = .series(sample)
        }
        intervals.append(reduced)
    }

    /// Where a series goes in the chart order: the preferred families' order, then everything else.
    static func rank(_ key: String) -> Int {
        preferredPrefixes.firstIndex { key.hasPrefix($0) } ?? preferredPrefixes.count
    }

    /// The process sources' labels (those with at least one process sample), sorted.
    public var processLabels: [String] {
        Set(intervals.flatMap { $0.sources.compactMap { $0.value.process == nil ? nil : $0.key } }).sorted()
    }

    /// Restarts, exits and appearances, in time order.
    public var events: [MonitorEvent] { intervals.flatMap { $0.events ?? [] } }
}
