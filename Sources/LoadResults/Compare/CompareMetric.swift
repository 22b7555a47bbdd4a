/// One quantity `compare` judges: a latency percentile of a step (`login.p99`, `login.sasl.p50`,
/// `message.p99`), a throughput (`throughput.logins`, `throughput.messages`, per second), or a rate
/// in percent (`error_rate`, `loss`, `muc.fanout`).
///
/// Latency and throughput changes are relative (%); rate changes are absolute (percentage points),
/// since a rate's baseline is often 0. `higherIsWorse` says which direction is a regression.
public struct CompareMetric: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A percentile of a latency histogram, milliseconds.
        case latency
        /// Events per second.
        case throughput
        /// A share in percent.
        case rate
        /// A monitored server's cost per unit of load (`server_costs`): ms of CPU per login or per
        /// message, bytes per online session; lower is better, changes are relative.
        case cost
    }

    /// The tolerance and report key, e.g. `login.p99`, `throughput.messages`, `error_rate`.
    public var key: String
    public var kind: Kind
    /// The latency metric (`login`, `login.sasl`, `message`) for latency keys; else nil.
    public var step: String?
    /// The percentile for latency keys (50, 90, 99).
    public var percentile: Double?
    public var higherIsWorse: Bool

    public static let percentiles: [(name: String, value: Double)] = [("p50", 50), ("p90", 90), ("p99", 99)]

    public static func latency(_ step: String, _ name: String, _ percentile: Double) -> CompareMetric {
        CompareMetric(key: "\(step).\(name)", kind: .latency, step: step, percentile: percentile, higherIsWorse: true)
    }

    public static let loginThroughput = CompareMetric(key: "throughput.logins", kind: .throughput, higherIsWorse: false)
    public static let messageThroughput = CompareMetric(key: "throughput.messages", kind: .throughput, higherIsWorse: false)
    public static let errorRate = CompareMetric(key: "error_rate", kind: .rate, higherIsWorse: true)
    public static let loss = CompareMetric(key: "loss", kind: .rate, higherIsWorse: true)
    public static let mucFanout = CompareMetric(key: "muc.fanout", kind: .rate, higherIsWorse: false)

    /// The non-latency metrics, in report order.
    public static let scalars: [CompareMetric] = [loginThroughput, messageThroughput, errorRate, loss, mucFanout]

    init(key: String, kind: Kind, step: String? = nil, percentile: Double? = nil, higherIsWorse: Bool) {
        self.key = key
        self.kind = kind
        self.step = step
        self.percentile = percentile
        self.higherIsWorse = higherIsWorse
    }

    /// The unit of the metric's values: `ms`, `/s`, `%`, or for costs `ms` (CPU) and `B` (memory).
    public var unit: String {
        switch kind {
        case .latency: return "ms"
        case .throughput: return "/s"
        case .rate: return "%"
        case .cost: return key.hasSuffix(ServerCostMetrics.memoryPerSession) ? "B" : "ms"
        }
    }

    /// The unit of a change: `%` (relative) or `pp` (percentage points, for rates).
    public var changeUnit: String { kind == .rate ? "pp" : "%" }

    /// The percentile's name (`p99`) for latency keys.
    public var statisticName: String? {
        percentile.flatMap { value in Self.percentiles.first { $0.value == value }?.name }
    }
}
