/// Finds outages in a run's intervals, fed one interval at a time in time order (live, or from
/// `intervals.jsonl`). Pure: no clock, no I/O.
///
/// Rules (docs/RESULTS.md, "Outages"), with `before` the sessions online at the end of the previous
/// interval and `reference` the open outage's `onlineBefore` (or `before` when none is open):
/// Outages are the server's: only its connection errors (`isConnectionError`: connects refused or
/// failed, connections it dropped or closed, stream errors, TLS failures) count. The run's own
/// timeouts, the profile's planned logouts and the end of the load never make one, even though
/// online falls with them.
/// - An interval is *disturbed* when online fell to at most (1 − `dropFraction`) × `before` during it
///   (`before > 0`) and connection errors account for at least half of the fall, or its connection
///   errors reached
///   max(`minimumErrors`, ⌈`errorFraction` × `reference`⌉) (`reference > 0`) while an outage is open or
///   online did not grow during the interval (so a ramp's connect errors start no outage).
/// - An outage starts at the first disturbed interval and takes in every disturbed interval until it
///   has recovered, except that online falling sharply again after more than `gapIntervals`
///   undisturbed intervals begins a new outage; it ends with the last disturbed interval. Its
///   `onlineBefore` is `before` at its start.
/// - It has recovered at the end of the first undisturbed interval after its start with at least
///   `recoveryFraction` × `onlineBefore` online. Until then (or until the next outage starts, or the
///   load ends) its storm goes on: reconnects, connection errors, the lowest online count and the
///   `login` / `reconnect.login` histograms are added up over the storm's intervals.
/// - Intervals whose midpoint is at or after `loadEnd` are not looked at (the final log-out).
/// Memory: two histograms while an outage is open, one small value per outage found.
public struct OutageFinder: Sendable {
    /// The thresholds of the rules above.
    public struct Criteria: Sendable, Equatable {
        public var dropFraction: Double
        public var errorFraction: Double
        public var minimumErrors: UInt64
        public var recoveryFraction: Double
        public var gapIntervals: Int

        public init(
            dropFraction: Double = 0.10, errorFraction: Double = 0.05, minimumErrors: UInt64 = 3,
            recoveryFraction: Double = 0.95, gapIntervals: Int = 1
        ) {
            self.dropFraction = dropFraction
            self.errorFraction = errorFraction
            self.minimumErrors = minimumErrors
            self.recoveryFraction = recoveryFraction
            self.gapIntervals = gapIntervals
        }
    }

    private struct OpenOutage: Sendable {
        var outage: Outage
        var quietIntervals = 0
        var reconnectLogin = LatencyHistogram()
        var login = LatencyHistogram()

        mutating func add(_ interval: IntervalSnapshot, errors: UInt64) {
            outage.onlineLowest = min(outage.onlineLowest, interval.gauge(.online))
            outage.connectionErrors += errors
            outage.reconnects += interval.counter(.sessionsReconnects)
            outage.reconnected += interval.counter(.sessionsReconnected)
            if let histogram = interval.latency[OutageFinder.reconnectLoginMetric] { reconnectLogin.add(histogram) }
            if let histogram = interval.latency["login"] { login.add(histogram) }
            outage.stormEnd = interval.end
        }

        func closed() -> Outage {
            var result = outage
            result.dropped = max(0, result.onlineBefore - result.onlineLowest)
            result.reconnectLogin = reconnectLogin.isEmpty ? nil : RunSummary.Percentiles(reconnectLogin)
            result.login = login.isEmpty ? nil : RunSummary.Percentiles(login)
            return result
        }
    }

    /// The metric each reconnect's login is timed under (from the end of its back-off).
    public static let reconnectLoginMetric = "reconnect.login"

    public let criteria: Criteria
    /// Seconds since the run's start when the load stopped; nil: unknown (every interval is looked at).
    public var loadEnd: Double?
    private var previous: (start: Double, online: Int64)?
    private var open: OpenOutage?
    private var closed: [Outage] = []

    public init(criteria: Criteria = Criteria(), loadEnd: Double? = nil) {
        self.criteria = criteria
        self.loadEnd = loadEnd
    }

    /// Error kinds that mean the server dropped, refused or failed a connection: connect failures,
    /// resets and closes, stream errors (`stream-system-shutdown` when a server stops) and TLS
    /// failures. Not the generator's own timeouts (`timeout-*`: login, keep-alive, steps) nor its
    /// giving up (`reconnect-abandoned`): those follow from a slow server or from the run's settings
    /// and are errors of their own kind, not outages.
    public static func isConnectionError(_ kind: String) -> Bool {
        RunOutcome.unreachableKinds.contains(kind) || kind.hasPrefix("connection-") || kind.hasPrefix("stream-") || kind == "tls"
    }

    static func connectionErrors(_ interval: IntervalSnapshot) -> UInt64 {
        interval.errors.reduce(0) { isConnectionError($1.key) ? $0 + $1.value : $0 }
    }

    /// Adds the next interval.
    public mutating func add(_ interval: IntervalSnapshot) {
        if let loadEnd, (interval.start + interval.end) / 2 >= loadEnd { return }
        let online = interval.gauge(.online)
        let errors = Self.connectionErrors(interval)
        defer { self.previous = (interval.start, online) }
        guard let previous else { return }
        let before = previous.online
        let reference = open?.outage.onlineBefore ?? before
        // Online falling is the server's doing only when its drops explain the fall: planned
        // logouts and the run's own timeouts lower online without a connection error.
        let fall = before - online
        let fell =
            before > 0 && Double(online) <= Double(before) * (1 - criteria.dropFraction) && errors > 0
            && errors * 2 >= UInt64(max(fall, 0))
        let errorLimit = max(criteria.minimumErrors, UInt64((criteria.errorFraction * Double(reference)).rounded(.up)))
        // Errors start an outage only while the population is not growing (a ramp's connect errors do not).
        let spiked = reference > 0 && errors >= errorLimit && (open != nil || online <= before)
        let disturbed = fell || spiked
        if var current = open {
            // Still disturbed, or errors again while the population comes back (timed-out reconnect
            // logins): the same outage. Only a new sharp drop after a quiet spell begins another.
            if disturbed && (current.quietIntervals <= criteria.gapIntervals || !fell) {
                current.quietIntervals = 0
                current.outage.end = interval.end
                current.add(interval, errors: errors)
                open = current
                return
            }
            if !disturbed {
                current.quietIntervals += 1
                current.add(interval, errors: errors)
                if Double(online) >= criteria.recoveryFraction * Double(current.outage.onlineBefore) {
                    current.outage.recoveredAt = interval.end
                    current.outage.timeToRecover = interval.end - current.outage.start
                    closed.append(current.closed())
                    open = nil
                } else {
                    open = current
                }
                return
            }
            // A sharp drop after a quiet spell without recovering: a new outage begins.
            closed.append(current.closed())
            open = nil
        }
        guard disturbed else { return }
        var started = OpenOutage(
            outage: Outage(
                start: interval.start, end: interval.end, onlineBefore: before, onlineLowest: before, dropped: 0,
                connectionErrors: 0, reconnects: 0, reconnected: 0, stormEnd: interval.end,
                lossWindowStart: previous.start))
        started.add(interval, errors: errors)
        open = started
    }

    /// Every outage so far (one still open is included, not recovered), with `messagesLost` from
    /// `losses` when given (each bucket counts in the outage whose window holds its midpoint).
    public func outages(losses: [MessageLossBucket]? = nil) -> [Outage] {
        var result = closed
        if let open { result.append(open.closed()) }
        guard let losses else { return result }
        for index in result.indices {
            let window = result[index].lossWindowStart...result[index].stormEnd
            result[index].messagesLost = losses.reduce(UInt64(0)) { window.contains(($1.start + $1.end) / 2) ? $0 + $1.lost : $0 }
        }
        return result
    }

    /// Lost messages inside the outages' windows, outside them and after `loadEnd` (seconds since the
    /// run's start; nil: unknown), by the midpoint of the interval they were sent in; `totalLost` is the
    /// run's `messages.lost` (losses in no bucket count outside). Nil without `losses`.
    public static func split(outages: [Outage], losses: [MessageLossBucket]?, totalLost: UInt64, loadEnd: Double? = nil) -> MessageLossSplit? {
        guard let losses else { return nil }
        let windows = outages.map { $0.lossWindowStart...$0.stormEnd }
        var inside: UInt64 = 0
        var after: UInt64 = 0
        var outsideBuckets: [MessageLossBucket] = []
        for bucket in losses {
            let middle = (bucket.start + bucket.end) / 2
            if windows.contains(where: { $0.contains(middle) }) {
                inside += bucket.lost
            } else if let loadEnd, middle >= loadEnd {
                after += bucket.lost
            } else {
                outsideBuckets.append(bucket)
            }
        }
        inside = min(inside, totalLost)
        after = min(after, totalLost - inside)
        return MessageLossSplit(inOutages: inside, outside: totalLost - inside - after, afterLoad: after, outsideBuckets: outsideBuckets)
    }
}
