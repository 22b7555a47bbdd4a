/// What `compare` resamples: one interval of a run (bootstrap over intervals) or a whole run
/// (bootstrap over repeated runs) — latency distributions per step plus the counts the throughput
/// and rate metrics are made of. Units add.
public struct MeasuredUnit: Sendable, Equatable {
    /// Step/metric name → latency distribution (from the intended start, as in `latency_ms`).
    public var latency: [String: BucketCounts] = [:]
    /// Length in seconds.
    public var seconds: Double = 0
    /// When the unit ended, seconds since the run's start (for charts; the latest end when added).
    public var end: Double = 0
    public var sessionsStarted: UInt64 = 0
    public var sessionsLoggedIn: UInt64 = 0
    /// Sessions that ended with an error (counter `sessions_failed`): the numerator of `error_rate`.
    public var sessionsFailed: UInt64 = 0
    /// Errors of every kind, including those a session survived (shown, not judged).
    public var errors: UInt64 = 0
    public var messagesSent: UInt64 = 0
    /// One-to-one and group chat messages received.
    public var messagesReceived: UInt64 = 0
    public var messagesLost: UInt64 = 0
    public var fanoutExpected: UInt64 = 0
    public var fanoutReceived: UInt64 = 0

    public init() {}

    /// The unit of one interval snapshot.
    public init(_ interval: IntervalSnapshot) {
        latency = interval.latency.mapValues(BucketCounts.init).filter { !$0.value.isEmpty }
        seconds = max(interval.end - interval.start, 0)
        end = interval.end
        sessionsStarted = interval.counter(.sessionsStarted)
        sessionsLoggedIn = interval.counter(.sessionsLoggedIn)
        sessionsFailed = interval.counter(.sessionsFailed)
        errors = interval.errorCount
        messagesSent = interval.counter(.messagesSent)
        messagesReceived = interval.counter(.messagesReceived) + interval.counter(.groupchatReceived)
        messagesLost = interval.ledger.lost
        fanoutExpected = interval.rooms.values.reduce(0) { $0 + $1.expected }
        fanoutReceived = interval.rooms.values.reduce(0) { $0 + $1.received }
    }

    public mutating func add(_ other: MeasuredUnit) {
        for (name, buckets) in other.latency { latency[name, default: BucketCounts()].add(buckets) }
        seconds += other.seconds
        end = max(end, other.end)
        sessionsStarted += other.sessionsStarted
        sessionsLoggedIn += other.sessionsLoggedIn
        sessionsFailed += other.sessionsFailed
        errors += other.errors
        messagesSent += other.messagesSent
        messagesReceived += other.messagesReceived
        messagesLost += other.messagesLost
        fanoutExpected += other.fanoutExpected
        fanoutReceived += other.fanoutReceived
    }

    /// Numerator and denominator of a throughput or rate metric in this unit (nil for latency
    /// metrics). The metric's value over several units is Σ numerators / Σ denominators (× 100 for
    /// rates, capped at 100 %: `ErrorRate.proportion`'s definition), so units weigh by their size.
    /// `error_rate` is sessions that ended with an error / sessions started.
    public func fraction(for metric: CompareMetric) -> (numerator: Double, denominator: Double)? {
        switch metric.key {
        case CompareMetric.loginThroughput.key: return (Double(sessionsLoggedIn), seconds)
        case CompareMetric.messageThroughput.key: return (Double(messagesReceived), seconds)
        case CompareMetric.errorRate.key: return (Double(sessionsFailed), Double(sessionsStarted))
        case CompareMetric.loss.key: return (Double(messagesLost), Double(messagesSent))
        case CompareMetric.mucFanout.key: return (Double(fanoutReceived), Double(fanoutExpected))
        default: return nil
        }
    }

    /// The metric's value over this unit alone: the percentile (ms) of its latency for latency
    /// metrics, else Σ numerator / Σ denominator (rates in %, capped at 100 % as
    /// `ErrorRate.proportion` caps). Nil when not measured. What a round contributes to the paired
    /// bootstrap of `xmppload ab`.
    public func value(of metric: CompareMetric) -> Double? {
        if let step = metric.step, let percentile = metric.percentile {
            guard let buckets = latency[step], !buckets.isEmpty else { return nil }
            return Double(buckets.microseconds(atPercentile: percentile)) / 1000
        }
        guard let (numerator, denominator) = fraction(for: metric) else { return nil }
        if metric.key == CompareMetric.errorRate.key {
            guard denominator > 0 else { return nil }
            return ErrorRate.proportion(failed: UInt64(numerator), started: UInt64(denominator)) * 100
        }
        guard denominator > 0 else { return nil }
        return metric.kind == .rate ? min(numerator / denominator, 1) * 100 : numerator / denominator
    }
}
