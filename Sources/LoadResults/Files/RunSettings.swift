/// Every `run` flag as parsed, with the profile's defaults applied — the configuration, not argv —
/// for `manifest.json`. Never holds the password. Durations are seconds.
public struct RunSettings: Codable, Sendable, Equatable {
    public var host: String
    public var port: Int
    public var domain: String
    /// `FIRST-LAST` account numbers of this generator.
    public var accounts: String
    public var accountPrefix: String
    /// `starttls`, `direct`, `none`, or nil: the profile's choice.
    public var tls: String?
    public var insecure: Bool
    /// Forced SASL mechanism, or nil: the profile's choice.
    public var sasl: String?
    public var outputDirectory: String
    public var intervalSeconds: Double
    public var maxLatenessSeconds: Double
    public var connectTimeoutSeconds: Double
    public var messageGraceSeconds: Double
    public var metricsPort: Int?
    public var eventLoops: Int
    /// `i/N`.
    public var segment: String

    enum CodingKeys: String, CodingKey {
        case host, port, domain, accounts
        case accountPrefix = "account_prefix"
        case tls, insecure, sasl
        case outputDirectory = "out"
        case intervalSeconds = "interval_s"
        case maxLatenessSeconds = "max_lateness_s"
        case connectTimeoutSeconds = "connect_timeout_s"
        case messageGraceSeconds = "message_grace_s"
        case metricsPort = "metrics_port"
        case eventLoops = "event_loops"
        case segment
    }

    public init(
        host: String, port: Int, domain: String, accounts: String, accountPrefix: String, tls: String?,
        insecure: Bool, sasl: String?, outputDirectory: String, intervalSeconds: Double,
        maxLatenessSeconds: Double, connectTimeoutSeconds: Double, messageGraceSeconds: Double,
        metricsPort: Int?, eventLoops: Int, segment: String
    ) {
        self.host = host
        self.port = port
        self.domain = domain
        self.accounts = accounts
        self.accountPrefix = accountPrefix
        self.tls = tls
        self.insecure = insecure
        self.sasl = sasl
        self.outputDirectory = outputDirectory
        self.intervalSeconds = intervalSeconds
        self.maxLatenessSeconds = maxLatenessSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.messageGraceSeconds = messageGraceSeconds
        self.metricsPort = metricsPort
        self.eventLoops = eventLoops
        self.segment = segment
    }
}
