/// When a run is long enough to judge trends: at least `minimumSeconds` of judged load (after the
/// warm-up and the ramp, before the load's end) in at least `minimumIntervals` intervals. Below
/// that, a slope projected to an hour is not a finding (a 90-second ramp read "+44574 %/h"), so no
/// trend is judged and the report says so (docs/PROFILES.md, "Trends").
///
/// Ten minutes hold several of a server's periodic tasks (Openfire pings idle clients every 6 min);
/// twenty points give the slope's Student-t interval 18 degrees of freedom (t ≈ 2.10 rather than
/// 12.7 with 3 points), so its confidence interval means something.
public enum TrendPolicy {
    /// Seconds of judged load a trend needs.
    public static let minimumSeconds: Double = 600
    /// Intervals a trend needs.
    public static let minimumIntervals = 20
}
