/// What `compare` needs from a run's `summary.json`: how it ended, how many intervals the generator
/// saturated in, the final message losses and the monitored server's costs. Decoded leniently (only these keys), so summaries
/// written by older versions, whose schema lacked later keys, still compare.
public struct SummaryOutcome: Decodable, Sendable, Equatable {
    public var stopReason: String
    public var saturatedIntervals: Int
    public var messagesLost: UInt64
    /// The monitored server's costs (`server_costs`, `--monitor process:…`); empty when none.
    public var serverCosts: [ServerCosts] = []

    public init(stopReason: String, saturatedIntervals: Int, messagesLost: UInt64, serverCosts: [ServerCosts] = []) {
        self.stopReason = stopReason
        self.saturatedIntervals = saturatedIntervals
        self.messagesLost = messagesLost
        self.serverCosts = serverCosts
    }

    public init(_ summary: RunSummary) {
        self.init(
            stopReason: summary.stopReason, saturatedIntervals: summary.generator.saturatedIntervals,
            messagesLost: summary.messages.lost, serverCosts: summary.serverCosts ?? [])
    }

    private enum Keys: String, CodingKey {
        case stopReason = "stop_reason"
        case generator, messages
        case serverCosts = "server_costs"
    }
    private enum GeneratorKeys: String, CodingKey { case saturatedIntervals = "saturated_intervals" }
    private enum MessageKeys: String, CodingKey { case lost }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        stopReason = try container.decode(String.self, forKey: .stopReason)
        let generator = try container.nestedContainer(keyedBy: GeneratorKeys.self, forKey: .generator)
        saturatedIntervals = try generator.decodeIfPresent(Int.self, forKey: .saturatedIntervals) ?? 0
        let messages = try container.nestedContainer(keyedBy: MessageKeys.self, forKey: .messages)
        messagesLost = try messages.decodeIfPresent(UInt64.self, forKey: .lost) ?? 0
        serverCosts = (try? container.decodeIfPresent([ServerCosts].self, forKey: .serverCosts)) ?? []
    }
}
