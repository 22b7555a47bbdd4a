/// Watches thresholds while the load runs, for `--abort-on-fail`: fed each interval with the run so
/// far, it answers which thresholds fail now.
///
/// Judged like the final verdict (`VerdictEvaluator`) with what is known so far: whole-run rules over
/// the judged intervals up to now, `over` rules over the windows that ended. Trend rules are judged
/// only at the end (a slope over a few intervals says little), and nothing fails before the warm-up
/// ended.
public struct ThresholdMonitor: Sendable {
    public private(set) var evaluator: VerdictEvaluator

    public init(evaluator: VerdictEvaluator) { self.evaluator = evaluator }

    /// Adds `interval` and returns the thresholds failing now (empty before the warm-up ended).
    /// `cumulative` is the run so far; its end tells whether the warm-up is over.
    public mutating func observe(interval: IntervalSnapshot, cumulative: IntervalSnapshot) -> [ThresholdResult] {
        evaluator.add(interval)
        guard cumulative.end >= evaluator.warmup else { return [] }
        let judged = evaluator.results(final: false)
        return zip(evaluator.rules, judged).filter { !$0.0.isTrend && $0.1.status == .fail }.map(\.1)
    }
}
