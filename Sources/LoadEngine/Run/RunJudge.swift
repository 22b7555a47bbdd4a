import LoadResults

/// How a run judges itself: its thresholds watched at every interval (for `--abort-on-fail`), an
/// optional stop rule of the caller's (a capacity step's collapse), and the whole run's verdict at
/// its end. A value the run's orchestrating task owns: no sink sees or changes it.
///
/// Invariants: nothing fails before the warm-up ended (`ThresholdMonitor`); the run is stopped at
/// most once by its judge; the verdict is computed once, from the run's own figures, after every
/// interval was observed.
public struct RunJudge: Sendable {
    /// A rule that stops the run when an interval shows it must (it returns why).
    public protocol StopRule: Sendable {
        mutating func observe(_ interval: IntervalEnd) -> String?
    }

    /// Why the judge stops the run.
    public enum Stop: Sendable, Equatable {
        /// A threshold failed after the warm-up (`--abort-on-fail`).
        case threshold(ThresholdResult)
        /// The stop rule fired, with its reason.
        case rule(String)
    }

    private var monitor: ThresholdMonitor
    private let abortOnFail: Bool
    private var stopRule: (any StopRule)?
    private var stopped = false

    public init(evaluator: VerdictEvaluator, abortOnFail: Bool = false, stopRule: (any StopRule)? = nil) {
        monitor = ThresholdMonitor(evaluator: evaluator)
        self.abortOnFail = abortOnFail
        self.stopRule = stopRule
    }

    /// What judges the run's figures (thresholds, trends, the run's own outcome).
    public var evaluator: VerdictEvaluator { monitor.evaluator }

    /// Takes one interval; returns why the run must stop now, once.
    public mutating func observe(_ interval: IntervalEnd) -> Stop? {
        let failing = monitor.observe(interval: interval.snapshot, cumulative: interval.cumulative)
        let ruled = stopRule?.observe(interval)
        guard !stopped else { return nil }
        if abortOnFail, let first = failing.first {
            stopped = true
            return .threshold(first)
        }
        if let ruled {
            stopped = true
            return .rule(ruled)
        }
        return nil
    }

    /// The whole run's verdict: messages the intervals did not count as lost but the summary's
    /// ledger does were found lost at the end. With the run's `timeline`, the verdict also says who
    /// limited the run (`ServerSide.attribution`: the generator, the server its monitors watched,
    /// neither, or unknown when the server side is unseen).
    public func verdict(of summary: RunSummary, timeline: MergedResults.Timeline? = nil) -> Verdict {
        let evaluator = monitor.evaluator
        let lostAtEnd = summary.messages.lost > evaluator.lostInIntervals ? summary.messages.lost - evaluator.lostInIntervals : 0
        var verdict = evaluator.verdict(stopReason: summary.stopReason, finalLost: lostAtEnd)
        if let timeline { verdict.limit = ServerSide.attribution(timeline, latency: summary.latencyMilliseconds) }
        return verdict
    }
}
