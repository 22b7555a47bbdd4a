/// `compare`'s judgement of one metric, given its 95 % interval of change and its tolerance.
///
/// Regressed when the whole interval lies beyond the tolerance on the worse side (up for latency,
/// errors and loss; down for throughput and fan-out); improved when it lies wholly beyond the
/// tolerance on the better side; otherwise no significant change. Not measured: a side has no data.
/// Not judged: the comparison cannot see run-to-run variation (fewer than three runs or rounds per
/// side), so the row carries what the within-run interval shows as its `indication` instead.
public enum ChangeVerdict: String, Codable, Sendable, CaseIterable {
    case improved
    case regressed
    case noSignificantChange = "no significant change"
    case notMeasured = "not measured"
    case notJudged = "not judged"

    public static func judge(low: Double, high: Double, tolerance: Double, higherIsWorse: Bool) -> ChangeVerdict {
        let worseLow = higherIsWorse ? low : -high
        let worseHigh = higherIsWorse ? high : -low
        if worseLow > tolerance { return .regressed }
        if worseHigh < -tolerance { return .improved }
        return .noSignificantChange
    }
}
