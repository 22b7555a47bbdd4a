import LoadResults
import NIOCore

/// Scrapes one `prometheus:` monitor: GET over HTTP/1.1 (`ScrapeHTTPClient`), parse
/// (`ExpositionParser`), keep the selected series, and turn counters into increases since the last
/// successful scrape (a reset counts from zero; a series first seen has no increase yet). A failed
/// scrape is a gap and leaves the counters where they were, so the next success's increase spans
/// the gap (its `seconds` says how long) and nothing is counted twice.
///
/// Not thread-safe; owned by one monitor thread. Memory between scrapes: the kept series' last
/// counter values and names (at most `ScrapeLimits.maxKeptSeries`).
struct PrometheusScraper {
    let label: String
    let target: MonitorSource.PrometheusTarget
    let limits: ScrapeLimits
    private let selectors: [SeriesSelector]?
    private var previousCounters: [String: Double] = [:]
    private var known: Set<String> = []
    /// Monotonic nanoseconds of the last successful scrape.
    private var previousTime: UInt64?

    init(label: String, target: MonitorSource.PrometheusTarget, limits: ScrapeLimits = .standard) {
        self.label = label
        self.target = target
        self.limits = limits
        selectors = target.series.selectors
    }

    /// Scrapes now: the interval's reading (a `SeriesSample`, or a gap).
    mutating func scrape() -> MonitorReading {
        let started = NIODeadline.now()
        let body: [UInt8]
        switch ScrapeHTTPClient.get(host: target.host, port: target.port, target: target.path, limits: limits) {
        case .success(let bytes): body = bytes
        case .failure(let failure): return .gap(Self.gap(for: failure, target: target))
        }
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
        let deadline = started + .nanoseconds(Int64(limits.timeout * 1e9))
        return absorb(body: body, at: started.uptimeNanoseconds, scrapeMilliseconds: elapsed, deadline: deadline)
    }

    /// Turns a body scraped at `at` (monotonic nanoseconds) into the interval's reading; split from
    /// `scrape` so tests feed bodies directly.
    mutating func absorb(body: [UInt8], at: UInt64, scrapeMilliseconds: Double, deadline: NIODeadline? = nil) -> MonitorReading {
        let parsed: ExpositionParser.Result
        do {
            parsed = try ExpositionParser.parse(body, selectors: selectors, limits: limits, known: known, deadline: deadline)
        } catch {
            switch error {
            case .tooManySamples(let limit):
                return .gap(MonitorGap(.tooManySamples, "more than \(limit) samples in one scrape of \(target.authority)"))
            case .malformed(let line, let problem):
                return .gap(MonitorGap(.malformed, "not a Prometheus text exposition: line \(line): \(problem)"))
            case .pastDeadline(let line):
                return .gap(
                    MonitorGap(
                        .timeout,
                        "reading \(body.count) bytes took longer than \(ScrapeHTTPClient.formatSeconds(limits.timeout)) (stopped at line \(line))"))
            }
        }
        var gauges: [String: Double] = [:]
        var increases: [String: Double] = [:]
        var counters: [String: Double] = [:]
        for sample in parsed.samples {
            guard sample.isCounter else {
                gauges[sample.key, default: 0] += sample.value
                continue
            }
            counters[sample.series] = sample.value
            guard let before = previousCounters[sample.series] else { continue }
            increases[sample.key, default: 0] += sample.value >= before ? sample.value - before : sample.value
        }
        let seconds = previousTime.map { Double(at &- $0) / 1e9 }
        previousCounters = counters
        known = Set(parsed.samples.map(\.series))
        previousTime = at
        return .series(
            SeriesSample(
                seconds: seconds, gauges: gauges, increases: seconds == nil ? [:] : increases,
                scrapeMilliseconds: scrapeMilliseconds, bodyBytes: body.count, samplesSeen: parsed.seen,
                dropped: parsed.dropped > 0 ? parsed.dropped : nil))
    }

    static func gap(for failure: ScrapeHTTPClient.Failure, target: MonitorSource.PrometheusTarget) -> MonitorGap {
        switch failure {
        case .unreachable(let detail): return MonitorGap(.unreachable, detail)
        case .timeout(let detail): return MonitorGap(.timeout, detail)
        case .status(let code): return MonitorGap(.httpStatus, "HTTP status \(code) from http://\(target.authority)\(target.path)")
        case .tooLarge(let detail): return MonitorGap(.tooLarge, detail)
        case .malformed(let detail): return MonitorGap(.malformed, detail)
        }
    }
}
