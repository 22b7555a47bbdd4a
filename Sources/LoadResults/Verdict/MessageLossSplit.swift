/// Messages lost inside the outages' windows and outside them (summary.json's `message_loss`).
/// `inOutages + outside` is the run's `messages.lost`.
public struct MessageLossSplit: Sendable, Equatable, Codable {
    public var inOutages: UInt64
    public var outside: UInt64
    /// Of `outside`: lost messages sent while no outage was going on, per interval they were sent in.
    public var outsideBuckets: [MessageLossBucket]

    enum CodingKeys: String, CodingKey {
        case inOutages = "in_outages"
        case outside
        case outsideBuckets = "outside_by_interval"
    }

    public init(inOutages: UInt64, outside: UInt64, outsideBuckets: [MessageLossBucket]) {
        self.inOutages = inOutages
        self.outside = outside
        self.outsideBuckets = outsideBuckets
    }
}
