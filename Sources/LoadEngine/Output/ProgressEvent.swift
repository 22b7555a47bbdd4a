import LoadResults

/// Notices a run gives while it goes, besides its intervals (see `RunOutput.progress`).
public enum ProgressEvent: Sendable, Equatable {
    /// The load stopped: sessions finish their step and log out (then whatever is left is closed).
    case stopping(reason: StopReason)
    /// The Prometheus endpoint is serving at this URL.
    case metricsEndpoint(String)
    /// The control port is serving at this URL (`xmppload control HOST:PORT …`).
    case controlEndpoint(String)
    /// Writing `intervals.jsonl` failed (disk full?); the run goes on and retries each interval.
    case intervalWritesFailing(IntervalWriteFailures)
    /// The intervals that failed to write earlier are written now.
    case intervalWritesRecovered(IntervalWriteFailures)
    /// The control port changed the load (`intervals.jsonl` records it between the intervals).
    case controlChanged(ControlEvent)
}
