import LoadResults
import NIOCore

/// One look at a monitored server between `capacity` steps, for `StepSettling`: its CPU since the
/// previous look (percent of one core) and its connections now. Process sources give their CPU and
/// open descriptors; Prometheus sources the rate of `process_cpu_seconds_total` (× 100) and the sum of
/// a connection gauge (`prosody_mod_c2s__connections`, else `node_netstat_Tcp_CurrEstab`) when the
/// source keeps them. nil: not known (a gap, or the first look). Blocking (a `/proc` read or one
/// bounded scrape): call it off the event loops, between steps.
public struct ServerIdleProbe: Sendable {
    private var process: ProcessSampler?
    private var scraper: PrometheusScraper?

    public init(source: MonitorSource, limits: ScrapeLimits = .standard) {
        switch source.target {
        case .process(let target): process = ProcessSampler(label: source.label, target: target)
        case .prometheus(let target): scraper = PrometheusScraper(label: source.label, target: target, limits: limits)
        }
    }

    /// The server's CPU since the previous call and its connections now.
    public mutating func look() -> (cpuPercent: Double?, connections: Double?) {
        if process != nil {
            guard let sample = process!.sample(now: NIODeadline.now().uptimeNanoseconds, at: 0)?.reading.process else { return (nil, nil) }
            return (sample.partial == true ? nil : sample.cpuPercent, sample.openFDs.map(Double.init))
        }
        guard let sample = scraper!.scrape().series else { return (nil, nil) }
        let cpu = sample.increases.first { $0.key.hasPrefix("process_cpu_seconds_total") }.flatMap { sample.rate($0.key) }.map { $0 * 100 }
        let connections =
            Self.sum(sample.gauges, prefix: "prosody_mod_c2s__connections") ?? Self.sum(sample.gauges, prefix: "node_netstat_Tcp_CurrEstab")
        return (cpu, connections)
    }

    static func sum(_ gauges: [String: Double], prefix: String) -> Double? {
        let values = gauges.filter { $0.key.hasPrefix(prefix) }.values
        return values.isEmpty ? nil : values.reduce(0, +)
    }
}
