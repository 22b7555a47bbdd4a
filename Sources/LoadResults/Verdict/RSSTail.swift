/// The generator's resident memory over the end of the load: the last 20 minutes, or the last 2/3
/// of the load when it was shorter than 30 minutes (summary.json's `rss_tail`). `trend` is the
/// least-squares slope per hour of the per-interval RSS with its 95 % interval (`TrendLine`).
public struct RSSTail: Sendable, Equatable, Codable {
    /// Seconds since the run's start.
    public var start: Double
    public var end: Double
    public var trend: TrendFinding

    enum CodingKeys: String, CodingKey {
        case start = "start_s"
        case end = "end_s"
        case trend
    }

    /// At most this long.
    public static let longest = 20.0 * 60

    /// The tail of `points` up to `loadEnd` (nil: up to the last interval's start), or nil when fewer
    /// than 3 intervals with generator health fall in it.
    public init?(points: [IntervalPoint], loadEnd: Double?) {
        guard let last = points.last else { return nil }
        let end = loadEnd ?? last.start
        let start = end - min(Self.longest, end * 2 / 3)
        let samples = points.compactMap { point -> (x: Double, y: Double)? in
            let middle = (point.start + point.end) / 2
            guard middle >= start, middle < end, let health = point.health else { return nil }
            return (middle / 3600, Double(health.rssBytes))
        }
        guard let line = TrendLine(points: samples) else { return nil }
        self.start = start
        self.end = end
        trend = TrendFinding(metric: "generator.rss", unit: .bytes, line: line)
    }

    /// `generator RSS over 600–1800 s: …`.
    public var line: String {
        "generator RSS over the last \(Outage.seconds(end - start)) s of the load (\(Outage.seconds(start))–\(Outage.seconds(end)) s): "
            + trend.line
    }
}
