import LoadEngine
import LoadResults

/// `xmppload run`'s exit status, from what the run returned: 130 interrupted, 1 when it did not work
/// at all (no session completed, the server unreachable), 99 a threshold failed, 0 otherwise; 2 is a
/// usage or profile error found before the run. `ab` reads children's statuses by these values.
public enum RunExitStatus: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case thresholdsFailed = 99
    case interrupted = 130

    public init(verdict: Verdict, stopReason: String) {
        if stopReason == StopReason.interrupted.rawValue {
            self = .interrupted
        } else if verdict.outcome.failed {
            self = .failure
        } else if !verdict.thresholdsPassed || stopReason == StopReason.thresholdsFailed.rawValue {
            self = .thresholdsFailed
        } else {
            self = .success
        }
    }

    public init(_ result: RunResult) { self.init(verdict: result.verdict, stopReason: result.summary.stopReason) }
}
