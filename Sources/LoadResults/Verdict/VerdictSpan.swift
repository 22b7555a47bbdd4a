/// Intervals added up for judging: the accumulated snapshot plus what accumulation does not keep
/// (the lowest online count during the load, peak memory and CPU, the seconds covered).
struct VerdictSpan: Sendable {
    var total = IntervalSnapshot()
    var seconds = 0.0
    var intervals = 0
    var start: Double?
    var end = 0.0
    /// Lowest `sessions_online` of the intervals that fell in the load phase.
    var minimumOnline: Int64?
    var peakRSS: UInt64?
    var peakCPUPercent: Double?
    /// Sessions online when the span began (the interval before its first's `sessions_online`):
    /// with the sessions started inside it, the sessions that could fail in it.
    var onlineAtStart: Int64 = 0

    var isEmpty: Bool { intervals == 0 }

    /// Adds the next interval; `onlineBefore` is `sessions_online` at the end of the interval before
    /// it (0 for the run's first), kept when it begins the span.
    mutating func add(_ interval: IntervalSnapshot, duringLoad: Bool, onlineBefore: Int64) {
        if intervals == 0 { onlineAtStart = max(0, onlineBefore) }
        if intervals == 0 { total = interval } else { total.accumulate(interval) }
        intervals += 1
        seconds += max(0, interval.end - interval.start)
        start = start ?? interval.start
        end = interval.end
        if duringLoad {
            let online = interval.gauge("sessions_online")
            minimumOnline = min(minimumOnline ?? online, online)
        }
        if let health = interval.health {
            peakRSS = max(peakRSS ?? 0, health.rssBytes)
            peakCPUPercent = max(peakCPUPercent ?? 0, health.cpuPercent)
        }
    }

    /// The measure's value over this span, or nil and why not.
    func value(
        of measure: ThresholdQuantity, rule unit: VerdictUnit? = nil, targetSessions: Int?,
        extraLost: UInt64 = 0
    ) -> (value: Double?, note: String?) {
        switch measure {
        case .latency(let metric, .count):
            return (Double(total.latency[metric]?.count ?? 0), nil)
        case .latency(let metric, .rate):
            guard seconds > 0 else { return (nil, "no time measured") }
            return (Double(total.latency[metric]?.count ?? 0) / seconds, nil)
        case .latency(let metric, let statistic):
            // Every other statistic is a percentile; 100 is the maximum.
            let percentile = statistic.percentile ?? 100
            guard let histogram = total.latency[metric], histogram.count > 0 else { return (nil, "no \(metric) samples") }
            return (percentile >= 100 ? Double(histogram.maxMicroseconds) / 1000 : histogram.milliseconds(atPercentile: percentile), nil)
        case .errorsRate:
            // `ErrorRate`: sessions that failed in the span / sessions that could (online at its
            // start plus started in it), so a late window of a closed model is not failed ÷ 0.
            let exposed = UInt64(onlineAtStart) + total.counter(.sessionsStarted)
            return (ErrorRate.proportion(failed: total.counter(.sessionsFailed), started: exposed), nil)
        case .errorsCount:
            return (Double(total.errorCount), nil)
        case .messagesLost:
            return (Double(total.ledger.lost + extraLost), nil)
        case .messagesLoss:
            let sent = total.counter(.messagesSent)
            let lost = total.ledger.lost + extraLost
            guard sent > 0 else { return lost == 0 ? (0, "no messages sent") : (1, nil) }
            return (Double(lost) / Double(sent), nil)
        case .sessionsOnline:
            guard let online = minimumOnline else { return (nil, "no interval during the load after the warm-up") }
            guard unit == .fraction else { return (Double(online), nil) }
            guard let target = targetSessions, target > 0 else {
                return (nil, "the plan has no target number of users (open model): write an absolute number")
            }
            return (Double(online) / Double(target), nil)
        case .sessionsFailed:
            return (Double(total.counter(.sessionsFailed)), nil)
        case .generatorRSS:
            return (peakRSS.map { Double($0) }, peakRSS == nil ? "no generator health measured" : nil)
        case .generatorCPU:
            return (peakCPUPercent.map { $0 / 100 }, peakCPUPercent == nil ? "no generator health measured" : nil)
        case .droppedArrivals:
            return (Double(total.counter(.droppedArrivals)), nil)
        }
    }
}
