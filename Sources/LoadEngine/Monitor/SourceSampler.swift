import LoadResults
import NIOCore

/// A process sampler or a scraper behind one call, for a source's thread.
struct SourceSampler {
    private var process: ProcessSampler?
    private var scraper: PrometheusScraper?

    init(source: MonitorSource, limits: ScrapeLimits) {
        switch source.target {
        case .process(let target): process = ProcessSampler(label: source.label, target: target)
        case .prometheus(let target): scraper = PrometheusScraper(label: source.label, target: target, limits: limits)
        }
    }

    /// The reading since the last call (nil: the first process read, which only sets the counters).
    mutating func sample(at: Double) -> (reading: MonitorReading, events: [MonitorEvent])? {
        if process != nil { return process!.sample(now: NIODeadline.now().uptimeNanoseconds, at: at) }
        return (scraper!.scrape(), [])
    }
}
