/// Messages lost inside the outages' windows, outside them while the load ran, and after the load
/// stopped (summary.json's `message_loss`). `inOutages + outside + afterLoad` is the run's
/// `messages.lost`; lost messages no interval dates (none in runs that record `lost_when_sent`) count
/// in `outside`.
public struct MessageLossSplit: Sendable, Equatable, Codable {
    public var inOutages: UInt64
    public var outside: UInt64
    /// Sent at or after the load's end (in flight at the final log-out).
    public var afterLoad: UInt64
    /// Of `outside`: lost messages sent while the load ran and no outage was going on, per interval
    /// they were sent in.
    public var outsideBuckets: [MessageLossBucket]

    enum CodingKeys: String, CodingKey {
        case inOutages = "in_outages"
        case outside
        case afterLoad = "after_load"
        case outsideBuckets = "outside_by_interval"
    }

    /// `after_load` is absent in the first files that had this field (read as 0).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        inOutages = try container.decode(UInt64.self, forKey: .inOutages)
        outside = try container.decode(UInt64.self, forKey: .outside)
        afterLoad = try container.decodeIfPresent(UInt64.self, forKey: .afterLoad) ?? 0
        outsideBuckets = try container.decode([MessageLossBucket].self, forKey: .outsideBuckets)
    }

    public init(inOutages: UInt64, outside: UInt64, afterLoad: UInt64 = 0, outsideBuckets: [MessageLossBucket]) {
        self.inOutages = inOutages
        self.outside = outside
        self.afterLoad = afterLoad
        self.outsideBuckets = outsideBuckets
    }
}
