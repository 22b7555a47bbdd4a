// `run`'s and `capacity`'s command-line options as plain values, before any checking, and what the
// process adds to them (environment, terminal, clock): the input of `RunOptionsResolver`.
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import RunControl

/// The options of a load run as given (nil or the default: not given). Texts are unchecked; the
/// resolver reports every problem with them at once. Defaults match the command line's.
public struct RunOptions: Sendable, Equatable {
    // Where and as whom.
    public var servers: [String] = []
    public var dns: String?
    public var source: String?
    /// `--var KEY=VALUE`, in order.
    public var variables: [String] = []
    public var startAt: String?
    public var runID: String?
    public var domain: String?
    public var accounts: String?
    public var accountPrefix = "user"
    public var password: String?
    public var passwordFile: String?
    public var serverEnv: String?
    public var tls: String?
    public var insecure = false
    public var sasl: String?
    /// `--login auto|classic|sasl2` (nil: the profiles' choice, else auto).
    public var login: String?
    // The engine and results.
    public var seed: UInt64?
    public var segment: String?
    public var out: String?
    public var overwrite = false
    public var interval = "5s"
    public var metricsPort: Int?
    public var metricsHost = "127.0.0.1"
    public var loops: Int?
    public var maxLateness = "1s"
    public var messageGrace = "5s"
    public var plain = false
    public var churn: String?
    public var writeStall = "30s"
    /// `--resolve-every`: how often server names are looked up again during the run ("0": never).
    public var resolveEvery = "5m"
    public var reconnect: Int?
    public var label: String?
    /// `--tag key=value`, in order.
    public var tags: [String] = []
    public var limits = SessionLimitOptions()
    /// `--monitor SPEC`, in order (`MonitorSource`: `process:PID`, `process:NAME`, `prometheus:URL`).
    public var monitors: [String] = []
    // The load (`run` only; `capacity` sets them per step).
    public var sessions: Int?
    public var ramp: String?
    public var rate: Double?
    public var duration: String?
    // The verdict and steering.
    public var thresholds: [String] = []
    public var warmup: String?
    public var abortOnFail = false
    public var controlPort: Int?
    public var controlHost = "127.0.0.1"
    /// `--control-token-file`: the control port's token from this file instead of a fresh one.
    public var controlTokenFile: String?

    public init() {}

    /// The load flags as `xmppload plan` reads them.
    public var load: LoadFlags { LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: seed) }
}

/// What the process adds to the options: defaults from the environment (`XMPPLOAD_*`, or the
/// `--server-env` file over it), the time, whether stdout is a terminal, the command line as typed.
public struct RunOptionsContext: Sendable {
    /// `XMPPLOAD_HOST:XMPPLOAD_PORT`.
    public var server: String?
    public var domain: String?
    public var password: String?
    /// `1-XMPPLOAD_ACCOUNTS`.
    public var accounts: String?
    /// The process environment (for `XMPPLOAD_SERVERS` and where the password came from).
    public var environment: [String: String]
    public var now: Date
    /// Stdout is a terminal: an in-place progress line unless `--plain`.
    public var terminal: Bool
    /// As typed; recorded redacted.
    public var commandLine: [String]
    /// The default number of event loops (one per core).
    public var processors: Int

    public init(
        server: String? = nil, domain: String? = nil, password: String? = nil, accounts: String? = nil,
        environment: [String: String] = [:], now: Date = Date(), terminal: Bool = false, commandLine: [String] = ["xmppload"],
        processors: Int = 1
    ) {
        self.server = server
        self.domain = domain
        self.password = password
        self.accounts = accounts
        self.environment = environment
        self.now = now
        self.terminal = terminal
        self.commandLine = commandLine
        self.processors = processors
    }
}

/// Every usage problem of a run's options, one line each (exit 2).
public struct RunOptionProblems: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [String]

    public init(_ problems: [String]) { self.problems = problems }

    public var description: String { problems.joined(separator: "\n") }
}

/// A run ready to start: its configuration, plan, verdict rules and profile, from `RunOptionsResolver`.
public struct ResolvedRun: Sendable {
    public var configuration: RunConfiguration
    public var plan: LoadPlan
    /// The profile's and the command line's thresholds, warm-up and the plan's end and target.
    public var evaluator: VerdictEvaluator
    /// The profile with the `--var` overrides applied.
    public var definition: RunDefinition
    /// nil: `LoadRun` makes a fresh one.
    public var runID: String?
    /// Printed at start (e.g. generators of a segmented run that cannot share a run id).
    public var warnings: [String]
    /// The control port's token read from `--control-token-file` (nil: the run makes a fresh one).
    public var controlToken: ControlToken? = nil
}
