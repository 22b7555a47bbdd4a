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
    // The keys below were added in 0.2; nil in older manifests.
    /// Every endpoint of the run as `--server` would name it (`host:port,weight=W` or a URL).
    public var endpoints: [String]?
    /// The transports the endpoints use (`tcp`, `websocket`, `bosh`), sorted, each once.
    public var transports: [String]?
    /// Accounts in the whole run (all segments) and in this generator's share.
    public var accountCount: Int?
    /// `--var KEY=VALUE` overrides of the profiles' `variables:` (empty: none).
    public var variables: [String: String]?
    /// `--reconnect N` (nil: the profiles' `reconnect:`).
    public var reconnectAttempts: Int?
    /// Churn in sessions per second across the whole run (`--churn` or the file's `churn:`; nil: none).
    public var churnPerSecond: Double?
    /// The share of churned sessions that resume a resumable stream (`churn: {resume: P%}`), when
    /// below 1 (nil: all of them); added with issue 40.
    public var churnResumeShare: Double?
    /// `--write-stall`, seconds.
    public var writeStallSeconds: Double?
    /// `--source` addresses (nil: the kernel chooses).
    public var sourceAddresses: String?
    /// `--metrics-host`.
    public var metricsHost: String?
    /// `--control-port` and `--control-host` (nil: no control port); added in 0.2.
    public var controlPort: Int?
    public var controlHost: String?
    /// `--start-at` as RFC 3339 (nil: at once).
    public var startAt: String?
    /// Where the run's id came from: `run-id` (given), `plan` (derived from the plan of a segmented
    /// run) or `generated` (a run of one generator).
    public var runIDSource: String?
    /// Every threshold judged (the profile's and `--threshold`'s), as written.
    public var thresholds: [String]?
    /// `--warmup`, seconds.
    public var warmupSeconds: Double?
    /// `--abort-on-fail`.
    public var abortOnFail: Bool?
    /// `--dns` (nil: /etc/resolv.conf's).
    public var dns: String?
    /// The hardening limits (`--max-element-size` …, `--max-scram-iterations`), by flag name.
    public var limits: [String: Int]?
    /// Where the password came from: `--password`, `--password-file PATH`, `XMPPLOAD_PASSWORD`,
    /// `--server-env PATH` (never the password itself).
    public var passwordSource: String?
    /// `--server-env FILE`.
    public var serverEnv: String?
    /// `--overwrite`, `--plain`.
    public var overwrite: Bool?
    public var plain: Bool?
    /// `--login` (`auto`, `classic`, `sasl2`), or nil: the profiles' choice; added with issue 40.
    public var login: String?
    /// `--label` and `--tag`s are in the manifest's own `label` and `tags`.
    /// `--monitor` values as given (nil: none). Not a setting that changes the load: `compare` does
    /// not refuse runs that watched the server differently.
    public var monitors: [String]?

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
        case segment, endpoints, transports
        case accountCount = "account_count"
        case variables = "vars"
        case reconnectAttempts = "reconnect"
        case churnPerSecond = "churn_per_s"
        case churnResumeShare = "churn_resume_share"
        case writeStallSeconds = "write_stall_s"
        case sourceAddresses = "source"
        case metricsHost = "metrics_host"
        case controlPort = "control_port"
        case controlHost = "control_host"
        case startAt = "start_at"
        case runIDSource = "run_id_source"
        case thresholds
        case warmupSeconds = "warmup_s"
        case abortOnFail = "abort_on_fail"
        case dns, limits, overwrite, plain
        case passwordSource = "password_source"
        case serverEnv = "server_env"
        case login
        case monitors
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
