/// The one definition of a run's error rate, used by the summary, thresholds (`errors.rate`),
/// trends, Prometheus and `compare`: **sessions that ended with an error / sessions started**, a
/// proportion in 0…1 (never above 100 %). Errors that a session survived (a drop it reconnected
/// from) are counted in `errors` by kind but do not make the session a failed one.
///
/// Over a window of the run (`over 10m`, a trend's interval) the denominator is the sessions that
/// could fail in it: those online at its start plus those started in it (`VerdictSpan`). Where only
/// starts are known and failures outnumber them, the rate is capped at 1.
public enum ErrorRate {
    /// `failed / started` in 0…1; 0 when nothing started and nothing failed, 1 when sessions failed
    /// but none started in the span.
    public static func proportion(failed: UInt64, started: UInt64) -> Double {
        guard failed > 0 else { return 0 }
        guard started > 0 else { return 1 }
        return min(1, Double(failed) / Double(started))
    }
}
