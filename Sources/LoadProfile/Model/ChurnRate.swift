/// A rate of deliberate drops (`churn:` in the run's file, `run --churn`): sessions per second across
/// the whole run, written `5`, `5/s`, `300/m` or `18000/h`; and (`churn: {rate: R, resume: P%}`) the
/// share of churned sessions whose server granted XEP-0198 resumption that come back resuming their
/// stream — a phone whose network dropped — while the others come back without it, as an app the
/// phone's system restarted (a fresh login, with a FAST token where the server gave one).
/// Invariant: `perSecond` is finite, > 0 and at most `maximumPerSecond`; `resumeShare` is in 0 … 1.
public struct ChurnRate: Sendable, Equatable {
    public static let maximumPerSecond = 100_000.0

    /// Drops per second across the run.
    public let perSecond: Double
    /// The share (0 … 1) of churned sessions that resume a resumable stream; 1 by default.
    public var resumeShare = 1.0

    /// nil unless `text` is a positive count, optionally `/s`, `/m` or `/h`, of at most
    /// `maximumPerSecond` per second.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let count = Double(first), count.isFinite, count > 0 else { return nil }
        let seconds: Double
        switch parts.count == 2 ? String(parts[1]) : "s" {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        default: return nil
        }
        let rate = count / seconds
        guard rate <= Self.maximumPerSecond else { return nil }
        perSecond = rate
    }
}
