import LoadResults

/// What every output gets when an interval ends: the interval's snapshot (merged over the loops),
/// the run's running total, and the facts a progress display needs.
public struct IntervalEnd: Sendable {
    /// The interval just ended; times are seconds since the run's start.
    public var snapshot: IntervalSnapshot
    /// Everything since the run's start, this interval included.
    public var cumulative: IntervalSnapshot
    /// Time since the run's start at the interval's end.
    public var elapsed: Duration
    /// The load phase's planned duration; nil: until every session finished.
    public var planned: Duration?
    /// Sessions alive now, on all loops.
    public var live: Int
    /// The monitors' intervals that completed since the last interval (`--monitor`; usually the
    /// one of this interval, none when a slow scrape is still out, several after one caught up).
    public var monitor: [MonitorInterval]

    public init(
        snapshot: IntervalSnapshot, cumulative: IntervalSnapshot, elapsed: Duration, planned: Duration?, live: Int, monitor: [MonitorInterval] = []
    ) {
        self.snapshot = snapshot
        self.cumulative = cumulative
        self.elapsed = elapsed
        self.planned = planned
        self.live = live
        self.monitor = monitor
    }
}
