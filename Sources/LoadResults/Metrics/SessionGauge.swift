/// The run's gauges: sessions by state at the end of each interval, as set by the interval
/// collector. `name` is the key in results files (`gauges` of `intervals.jsonl`) and, prefixed
/// `xmppload_`, the Prometheus gauge; neither may change without breaking readers.
///
/// Unlike counters, gauges add only when merging the same interval from several loops or generators;
/// over time the later value wins (see `IntervalSnapshot.accumulate`).
public enum SessionGauge: String, CaseIterable, Sendable {
    /// Sessions logged in and running their steps.
    case online = "sessions_online"
    /// Sessions connecting or logging in.
    case connecting = "sessions_connecting"
    /// Sessions with an open connection in any state (a bound on concurrency).
    case live = "sessions_live"

    /// The key in results files.
    public var name: String { rawValue }
}

extension IntervalSnapshot {
    /// A session gauge's value at the interval's end (0 when not set).
    public func gauge(_ gauge: SessionGauge) -> Int64 { gauges[gauge.name] ?? 0 }
}

extension MetricsRecorder {
    public mutating func setGauge(_ gauge: SessionGauge, _ value: Int64) {
        setGauge(gauge.name, value)
    }
}
