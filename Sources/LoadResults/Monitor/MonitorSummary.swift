/// summary.json's `monitors`: each monitored source summed up over the run, by label.
///
/// CPU figures are in percent of one core; the mean is weighted by each sample's span (total CPU
/// seconds over the seconds sampled), the maximum is the busiest interval's. Memory and counts are
/// bytes and numbers at interval ends. Gaps are counted, never averaged in. Built by
/// `MonitorAccumulator` from the `MonitorInterval`s as they come (nothing is kept per interval).
public struct MonitorSummary: Sendable, Equatable, Codable {
    /// One process source's figures.
    public struct ProcessFigures: Sendable, Equatable, Codable {
        public var name: String
        public var cpuSeconds: Double
        public var cpuMeanPercent: Double
        public var cpuMaxPercent: Double
        /// The most cores the process could use in any interval (`ProcessSample.usableCores`).
        public var usableCores: Int
        /// The busiest interval's CPU in percent of its usable cores.
        public var cpuMaxPercentOfUsable: Double
        public var busiestThreadMaxPercent: Double?
        public var rssStartBytes: UInt64
        public var rssEndBytes: UInt64
        public var rssMaxBytes: UInt64
        public var openFDsMax: Int?
        public var threadsMax: Int

        enum CodingKeys: String, CodingKey {
            case name
            case cpuSeconds = "cpu_seconds"
            case cpuMeanPercent = "cpu_mean_percent"
            case cpuMaxPercent = "cpu_max_percent"
            case usableCores = "usable_cores"
            case cpuMaxPercentOfUsable = "cpu_max_percent_of_usable"
            case busiestThreadMaxPercent = "busiest_thread_max_percent"
            case rssStartBytes = "rss_start_bytes"
            case rssEndBytes = "rss_end_bytes"
            case rssMaxBytes = "rss_max_bytes"
            case openFDsMax = "open_fds_max"
            case threadsMax = "threads_max"
        }
    }

    /// One kept series' figures: a gauge's mean, maximum and last value; a counter's total increase
    /// and its mean and maximum rate per second.
    public struct SeriesFigures: Sendable, Equatable, Codable {
        public enum Kind: String, Sendable, Equatable, Codable { case gauge, counter }
        public var kind: Kind
        /// Intervals with a value.
        public var intervals: Int
        /// Gauges: the mean of the interval values. Counters: the mean rate per second.
        public var mean: Double
        /// Gauges: the largest value. Counters: the largest rate per second.
        public var max: Double
        /// Gauges: the last value.
        public var last: Double?
        /// Counters: the increase over the run.
        public var total: Double?
    }

    /// One source over the run.
    public struct Source: Sendable, Equatable, Codable {
        /// `process` or `prometheus`.
        public var kind: String
        /// The `--monitor` value.
        public var spec: String
        /// Intervals seen, and of those, gaps (by reason).
        public var intervals: Int
        public var gaps: Int
        public var gapReasons: [String: Int]?
        /// Restarts, exits and appearances (process sources by name).
        public var events: [MonitorEvent]?
        public var process: ProcessFigures?
        public var series: [String: SeriesFigures]?

        enum CodingKeys: String, CodingKey {
            case kind, spec, intervals, gaps
            case gapReasons = "gap_reasons"
            case events, process, series
        }
    }

    public var sources: [String: Source]

    public init(sources: [String: Source]) {
        self.sources = sources
    }

    public init(from decoder: any Decoder) throws {
        sources = try decoder.singleValueContainer().decode([String: Source].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(sources)
    }
}
