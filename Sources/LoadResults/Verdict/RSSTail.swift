/// The generator's resident memory over the end of the load: the last 20 minutes, or the last 2/3
/// of the load when it was shorter than 30 minutes (summary.json's `rss_tail`). `trend` is the
/// least-squares slope per hour of the per-interval RSS with its 95 % interval (`TrendLine`).
/// An outage's reconnect storm inside the tail raises RSS in a step (memory the allocator keeps after
/// the storm's peak) that a slope over the whole tail reads as drift, so `afterOutages` gives the
/// slope from the last storm's end (`afterOutagesStart`) to the load's end as well, when at least 3
/// intervals remain.
public struct RSSTail: Sendable, Equatable, Codable {
    /// Seconds since the run's start.
    public var start: Double
    public var end: Double
    public var trend: TrendFinding
    public var afterOutagesStart: Double?
    public var afterOutages: TrendFinding?

    enum CodingKeys: String, CodingKey {
        case start = "start_s"
        case end = "end_s"
        case trend
        case afterOutagesStart = "after_outages_start_s"
        case afterOutages = "after_outages"
    }

    /// At most this long.
    public static let longest = 20.0 * 60

    /// The tail of `points` up to `loadEnd` (nil: up to the last interval's start), or nil when it
    /// is too short to judge a trend (`TrendPolicy`: at least 10 minutes in 20 intervals with
    /// generator health; a slope over a minute's ramp is not a finding). `outages`: the run's, for
    /// `afterOutages` (judged under the same rule).
    public init?(points: [IntervalPoint], loadEnd: Double?, outages: [Outage] = []) {
        guard let last = points.last else { return nil }
        let end = loadEnd ?? last.start
        let start = end - min(Self.longest, end * 2 / 3)
        func line(from start: Double) -> TrendLine? {
            let inside = points.filter { point in
                let middle = (point.start + point.end) / 2
                return middle >= start && middle < end && point.health != nil
            }
            guard let first = inside.first, let final = inside.last, inside.count >= TrendPolicy.minimumIntervals,
                final.end - first.start >= TrendPolicy.minimumSeconds - 1e-6
            else { return nil }
            return TrendLine(points: inside.map { (($0.start + $0.end) / 2 / 3600, Double($0.health!.rssBytes)) })
        }
        guard let whole = line(from: start) else { return nil }
        self.start = start
        self.end = end
        trend = TrendFinding(metric: "generator.rss", unit: .bytes, line: whole)
        if let lastStorm = outages.map(\.stormEnd).max(), lastStorm > start, let after = line(from: lastStorm) {
            afterOutagesStart = lastStorm
            afterOutages = TrendFinding(metric: "generator.rss", unit: .bytes, line: after)
        }
    }

    /// `generator RSS over the last 1200.0 s of the load (600.0–1800.0 s): …` and, when known, the
    /// slope after the last outage.
    public var line: String {
        "generator RSS over the last \(Outage.seconds(end - start)) s of the load (\(Outage.seconds(start))–\(Outage.seconds(end)) s): "
            + trend.line
            + (afterOutages.map { "; after the last outage (\(Outage.seconds(afterOutagesStart ?? 0))–\(Outage.seconds(end)) s): " + $0.line } ?? "")
    }
}
