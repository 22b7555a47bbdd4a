// The run's threshold checker as one of its outputs: watches every interval for `--abort-on-fail`
// and puts the whole run's verdict into the summary before it is written.
import Foundation
import LoadResults

/// Fed every interval, asks the run to stop (once) when `abortOnFail` is set and a threshold fails
/// after the warm-up (`ThresholdMonitor`); when the run completes its summary, judges the whole run
/// (`VerdictEvaluator.verdict`) and applies the verdict, so summary.json, the manifest and report.html
/// carry it, and keeps it for the exit status.
/// `@unchecked Sendable`: every access to the mutable state holds `lock`.
public final class ThresholdWatch: RunOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var monitor: ThresholdMonitor
    private let abortOnFail: Bool
    private let announce: @Sendable (ThresholdResult) -> Void
    private var stopped = false
    private var judged: Verdict?

    /// `announce` is told the failing threshold when it stops the run (the command line prints it).
    public init(evaluator: VerdictEvaluator, abortOnFail: Bool, announce: @escaping @Sendable (ThresholdResult) -> Void = { _ in }) {
        self.monitor = ThresholdMonitor(evaluator: evaluator)
        self.abortOnFail = abortOnFail
        self.announce = announce
    }

    /// The verdict applied to the summary, once the run completed it.
    public var verdict: Verdict? { lock.withLock { judged } }

    public func intervalEnded(_ interval: IntervalEnd) -> StopReason? {
        let failed: ThresholdResult? = lock.withLock {
            let failing = monitor.observe(interval: interval.snapshot, cumulative: interval.cumulative)
            guard abortOnFail, !stopped, let first = failing.first else { return nil }
            stopped = true
            return first
        }
        guard let failed else { return nil }
        announce(failed)
        return .thresholdsFailed
    }

    /// Judges the run: messages the intervals did not count as lost but the summary's ledger does
    /// were found lost at the end.
    public func complete(_ summary: inout RunSummary) {
        let evaluator = lock.withLock { monitor.evaluator }
        let lostAtEnd = summary.messages.lost > evaluator.lostInIntervals ? summary.messages.lost - evaluator.lostInIntervals : 0
        let verdict = evaluator.verdict(stopReason: summary.stopReason, finalLost: lostAtEnd)
        summary.apply(verdict)
        lock.withLock { judged = verdict }
    }

    /// The verdict was applied by `complete` before the run's files were written.
    public func runEnded(_ end: RunEnd) {}
}
