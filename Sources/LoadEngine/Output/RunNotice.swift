import LoadResults

/// What happens to a run between its intervals, told to every `RunSink` (`RunSink.notice`).
public enum RunNotice: Sendable, Equatable {
    /// The load stopped: sessions finish their step and log out (then whatever is left is closed).
    case stopping(reason: StopReason)
    /// The Prometheus endpoint is serving at this URL.
    case metricsEndpoint(String)
    /// An input is serving at this URL (the control port: `xmppload control HOST:PORT …`).
    case inputEndpoint(name: String, url: String)
    /// Writing `intervals.jsonl` failed (disk full?); the run goes on and retries each interval.
    case intervalWritesFailing(IntervalWriteFailures)
    /// The intervals that failed to write earlier are written now.
    case intervalWritesRecovered(IntervalWriteFailures)
    /// An input changed the load (`intervals.jsonl` records it between the intervals).
    case controlChanged(ControlEvent)
    /// A threshold failed after the warm-up and `--abort-on-fail` stops the run.
    case thresholdFailed(ThresholdResult)
    /// The run's own stop rule (`RunJudge.StopRule`, e.g. a capacity step's collapse) stops it.
    case stopRuleFired(String)
    /// A `--monitor` source failed for the first time (or dropped series): one per source per run;
    /// later gaps are only marked in intervals.jsonl.
    case monitorWarning(String)
}
