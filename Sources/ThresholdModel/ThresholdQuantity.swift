// What a threshold measures: latency statistics and the run's counters, by name.

/// What a threshold measures: a latency statistic of any timed metric (`login.p99`, `login.sasl.p90`,
/// `message.max`, a step's name…) or one of the run's counters (`errors.rate`, `messages.lost`…).
///
/// Definitions (docs/PROFILES.md): `errors.rate` is sessions that ended with an error ÷ sessions
/// that could (online at the span's start plus started in it), a proportion (`ErrorRate`); `messages.loss` is lost ÷ sent; `sessions.online` is the lowest online
/// count of any interval judged, absolute or as a fraction of the plan's target users;
/// `generator.rss` is the highest resident memory; `generator.cpu` the highest CPU (% of one core).
public enum ThresholdQuantity: Sendable, Hashable, CustomStringConvertible {
    case latency(metric: String, statistic: LatencyStatistic)
    case errorsRate
    case errorsCount
    case messagesLost
    case messagesLoss
    case sessionsOnline
    case sessionsFailed
    case generatorRSS
    case generatorCPU
    case droppedArrivals

    /// The named (non-latency) quantities, as written.
    public static let named: [(name: String, quantity: ThresholdQuantity)] = [
        ("errors.rate", .errorsRate), ("errors.count", .errorsCount), ("messages.lost", .messagesLost),
        ("messages.loss", .messagesLoss), ("sessions.online", .sessionsOnline), ("sessions.failed", .sessionsFailed),
        ("generator.rss", .generatorRSS), ("generator.cpu", .generatorCPU), ("dropped_arrivals", .droppedArrivals),
    ]

    /// The quantities a `trend(…)` can judge: latency percentiles, `errors.rate`, `sessions.online`,
    /// `generator.rss`, `generator.cpu` — values that exist per interval.
    public var hasTrend: Bool {
        switch self {
        case .latency(_, let statistic): return statistic.percentile != nil
        case .errorsRate, .generatorRSS, .generatorCPU, .sessionsOnline: return true
        default: return false
        }
    }

    /// The units a bound may be written in (the first is the one hints suggest).
    public var allowedUnits: [VerdictUnit] {
        switch self {
        case .latency(_, let statistic):
            switch statistic {
            case .count: return [.count]
            case .rate: return [.perSecond]
            default: return [.milliseconds]
            }
        case .errorsRate, .messagesLoss, .generatorCPU: return [.fraction]
        case .sessionsOnline: return [.fraction, .count]
        case .errorsCount, .messagesLost, .sessionsFailed, .droppedArrivals: return [.count]
        case .generatorRSS: return [.bytes]
        }
    }

    public var description: String {
        switch self {
        case .latency(let metric, let statistic): return "\(metric).\(statistic.rawValue)"
        default: return Self.named.first { $0.quantity == self }?.name ?? "?"
        }
    }
}

/// A statistic of a latency metric. Percentiles and `max` are milliseconds from HDR histograms;
/// `count` is the number of samples; `rate` samples per second.
public enum LatencyStatistic: String, Sendable, CaseIterable {
    case p50, p90, p95, p99, p999, max, count, rate

    /// The percentile (0–100) for percentile statistics, 100 for `max`, nil for `count` and `rate`.
    public var percentile: Double? {
        switch self {
        case .p50: return 50
        case .p90: return 90
        case .p95: return 95
        case .p99: return 99
        case .p999: return 99.9
        case .max: return 100
        case .count, .rate: return nil
        }
    }
}
