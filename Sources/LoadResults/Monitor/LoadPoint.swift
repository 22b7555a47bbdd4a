/// The load's side of one interval, reduced to what the server's costs and the attribution need:
/// work done, sessions online, one latency metric's p99 and the generator's own health.
///
/// Times are seconds since the run's start; latency in milliseconds (corrected for coordinated
/// omission, as the verdict reads it).
public struct LoadPoint: Sendable, Equatable {
    public var start: Double
    public var end: Double
    /// Successful logins (first logins, reconnects, resumptions) in the interval.
    public var logins: Double
    /// Chat and groupchat messages sent in the interval.
    public var messages: Double
    /// Sessions online at the interval's end.
    public var online: Double
    /// The watched metric's p99 over the interval, and how many it was read from (0: none recorded).
    public var latencyP99Milliseconds: Double
    public var latencyCount: UInt64
    /// The generator's health in the interval (nil in results without it).
    public var generator: GeneratorHealth?

    public init(
        start: Double, end: Double, logins: Double = 0, messages: Double = 0, online: Double = 0,
        latencyP99Milliseconds: Double = 0, latencyCount: UInt64 = 0, generator: GeneratorHealth? = nil
    ) {
        self.start = start
        self.end = end
        self.logins = logins
        self.messages = messages
        self.online = online
        self.latencyP99Milliseconds = latencyP99Milliseconds
        self.latencyCount = latencyCount
        self.generator = generator
    }

    /// One interval of a run, watching `metric`'s corrected latency (`login` by default).
    public init(_ snapshot: IntervalSnapshot, metric: String = "login") {
        let histogram = snapshot.latency[metric]
        self.init(
            start: snapshot.start, end: snapshot.end, logins: Double(snapshot.successfulLogins),
            messages: Double(snapshot.counter(.messagesSent) + snapshot.counter(.groupchatSent)),
            online: Double(snapshot.gauge(.online)),
            latencyP99Milliseconds: histogram.map { $0.count > 0 ? $0.milliseconds(atPercentile: 99) : 0 } ?? 0,
            latencyCount: histogram?.count ?? 0, generator: snapshot.health)
    }

    public var seconds: Double { max(0, end - start) }
}
