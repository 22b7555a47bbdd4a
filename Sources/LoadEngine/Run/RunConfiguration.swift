import Foundation
import LoadProfile
import LoadResults
import NIOCore
import XMPPCore

/// What the user asked for on the command line (after the profile's defaults were applied): the
/// server, the accounts, TLS and SASL choices, and where results go. A plain value.
public struct RunConfiguration: Sendable {
    /// Host (IP literal or name resolving to loopback in tests) and port of the server's c2s listener.
    public var host: String
    public var port: Int
    /// The XMPP domain of the accounts (`user1@<domain>`).
    public var domain: String
    /// Account numbers `first...last`: session accounts are `<prefix><number>@<domain>`.
    public var accounts: ClosedRange<Int>
    public var accountPrefix: String
    public var password: String
    /// nil: the profile's choice, else STARTTLS when offered.
    public var tls: TLSMode?
    public var insecure: Bool
    /// Forces one SASL mechanism for every login, overriding the profile.
    public var mechanism: SASLMechanism?
    /// `--login`: the login protocol of every profile (auto: SASL2 where offered; classic; sasl2),
    /// overriding the profiles' `login: {mode: …}`; nil: the profiles' choice, else auto.
    public var loginMode: LoginMode?
    /// Where results are written.
    public var outputDirectory: String
    /// The snapshot interval.
    public var interval: Duration
    /// An arrival later than this behind its intended time is dropped, not started (rule 2).
    public var maxArrivalLateness: Duration
    /// The TCP connect timeout.
    public var connectTimeout: Duration
    /// Serve Prometheus metrics on this port of `metricsHost` (nil: off).
    public var metricsPort: Int?
    public var metricsHost: String
    /// Serve the control port (`/status`, `/load`, `/pause`, `/resume`, `/stop`) on this port of
    /// `controlHost` (nil: off).
    public var controlPort: Int?
    /// The address the control port listens on (loopback by default).
    public var controlHost = "127.0.0.1"
    /// Grace period after the last traffic before still-missing messages count as lost.
    public var messageGrace: Duration
    /// Number of event loops (threads); defaults to the number of cores.
    public var eventLoops: Int
    /// Print an in-place status panel (terminal) instead of plain progress lines.
    public var interactive: Bool
    /// The command line, for the manifest.
    public var commandLine: [String]
    /// This generator's share of the plan (`--segment i/N`): arrivals n with n % N == i. `accounts`
    /// is already this segment's block of the account range.
    public var segment: Segment = .whole
    /// `--reconnect N`: reconnect attempts in a row after a drop, for every profile (nil: the profiles').
    public var reconnectAttempts: Int?
    /// `--churn R`: online sessions dropped (and reconnected) per second across the whole run; each
    /// generator of a `--segment` run takes its share. nil: no churn.
    public var churnRate: Double?
    /// The share (0 … 1) of churned sessions that resume a resumable XEP-0198 stream (the file's
    /// `churn: {resume: P%}`); the others log in afresh (with a FAST token where they hold one).
    public var churnResumeShare = 1.0
    /// A session whose socket does not drain for this long ends with `write-stalled` (`--write-stall`).
    public var writeStallTimeout: Duration = .seconds(30)
    /// … or as soon as this many bytes are queued on a socket that does not drain.
    public var maxBufferedWriteBytes = 1 << 20
    /// every endpoint of the run (`--server` repeated, `XMPPLOAD_SERVERS`, or DNS SRV), each with
    /// weight and priority; `host`/`port` above are the first. Each session draws its endpoint from
    /// these by its arrival index (`RunEnvironment`).
    public var endpoints: [WeightedEndpoint] = []
    /// `--source`: local addresses outgoing connections bind to, round robin
    /// (`address(forConnection:)`); nil: the kernel chooses.
    public var sourceAddresses: SourceAddressPool?
    /// `--start-at`: the wall-clock time the load starts (the CLI already
    /// sleeps until then before `LoadRun.run`); for the manifest.
    public var startAt: Date?
    /// with `--segment i/N` (N > 1), the whole run's planned population, so `to: random`
    /// also picks other generators' sessions (`WholeRunTargets`); nil: this generator's sessions only.
    public var population: PlannedPopulation?
    /// inbound XML limits of every session (`--max-element-size`, `--max-depth`, …).
    public var xmlLimits: XMLLimits = .default
    /// highest SCRAM iteration count accepted (`--max-scram-iterations`).
    public var maxSCRAMIterations = SCRAMClient.defaultMaxIterations
    /// `--label` and `--tag key=value`: recorded in the manifest for `compare`.
    public var label: String?
    public var tags: [String: String] = [:]
    /// How often endpoint names are resolved again during the run, off the event loops, so a DNS
    /// change during a long soak is followed (`EndpointRefresh`); nil or zero: resolved once, at start.
    public var endpointRefresh: Duration? = .seconds(300)
    /// The endpoints came from DNS SRV (no server was given): a connect refused by one target falls
    /// back to the next of the session's RFC 2782 order. Endpoints the user named (`--server`,
    /// `servers:`) never fall back: a dead node must show as its errors, not vanish into the others.
    public var endpointsFromDNS = false
    /// This generator's stamp key when it shares a `--run-id` with other generators without
    /// `--segment` (`MessageStamp.generator`; nonzero), so their overlapping serials stay apart and
    /// `report` reconciles them; nil otherwise.
    public var generatorKey: UInt32?
    /// `--monitor`: the server's processes and metrics endpoints watched beside the load (empty: none).
    public var monitors: [MonitorSource] = []
    /// What the manifest's `settings` records beyond the fields above: the `--var` overrides, every
    /// threshold's text, `--warmup`, `--abort-on-fail`, `--dns`, where the run id came from and the
    /// whole run's account count. Never read by the engine.
    public var recordedExtras = RecordedExtras()

    /// Settings that only the manifest needs (see `recordedExtras`).
    public struct RecordedExtras: Sendable {
        public var variables: [String: String] = [:]
        public var thresholds: [String] = []
        public var warmupSeconds: Double = 0
        public var abortOnFail = false
        public var dns: String?
        public var runIDSource = "generated"
        public var wholeRunAccounts: Int?
        public var passwordSource: String?
        public var serverEnv: String?
        public var overwrite = false
        public var plain = false
        public init() {}
    }

    public init(
        host: String, port: Int, domain: String, accounts: ClosedRange<Int>, accountPrefix: String = "user",
        password: String, tls: TLSMode? = nil, insecure: Bool = false,
        mechanism: SASLMechanism? = nil, outputDirectory: String, interval: Duration = .seconds(5),
        maxArrivalLateness: Duration = .seconds(1), connectTimeout: Duration = .seconds(10),
        metricsPort: Int? = nil, metricsHost: String = "127.0.0.1", messageGrace: Duration = .seconds(5),
        eventLoops: Int = System.coreCount, interactive: Bool = false, commandLine: [String] = []
    ) {
        self.host = host
        self.port = port
        self.domain = domain
        self.accounts = accounts
        self.accountPrefix = accountPrefix
        self.password = password
        self.tls = tls
        self.insecure = insecure
        self.mechanism = mechanism
        self.outputDirectory = outputDirectory
        self.interval = interval
        self.maxArrivalLateness = maxArrivalLateness
        self.connectTimeout = connectTimeout
        self.metricsPort = metricsPort
        self.metricsHost = metricsHost
        self.messageGrace = messageGrace
        self.eventLoops = eventLoops
        self.interactive = interactive
        self.commandLine = commandLine
    }
}
