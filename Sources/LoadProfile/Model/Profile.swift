import ThresholdModel
import XMPPCore

/// A named sequence of steps that one virtual user runs, decoded and validated from YAML.
///
/// Invariants (checked by `ProfileLoader`): at least one step; no stanza step before `login`;
/// every `${variable}` in a template is defined; durations, counts and weights are positive.
public struct Profile: Sendable, Equatable {
    public var name: String
    public var description: String
    /// Defaults for the login step (flags may override).
    public var login: LoginOptions
    public var steps: [Step]
    public var repeatMode: RepeatMode
    public var variables: [String: String]
    /// Timeout of a step that waits for an answer, unless the step sets its own.
    public var stepTimeout: Duration
    /// What a session does when it loses its connection after logging in (`reconnect:`; off by default).
    public var reconnect: ReconnectPolicy = .off
    /// Client pings or whitespace while logged in (`keepalive:`; none by default).
    public var keepAlive: KeepAlive?
    /// XEP-0198 acks and resumption (`stream_management:`; off by default).
    public var streamManagement: StreamManagement?
    /// The transport its sessions connect over (`transport:`; default `any`: every endpoint of the run).
    public var transport: ProfileTransport = .any
    /// Where `transport:` is written, for `check`'s problems (nil when the profile does not say).
    public var transportLocation: SourceLocation?
    /// The file it came from.
    public var source: String

    public init(
        name: String, description: String = "", login: LoginOptions = LoginOptions(), steps: [Step],
        repeatMode: RepeatMode = .once, variables: [String: String] = [:], stepTimeout: Duration = .seconds(30),
        source: String = ""
    ) {
        self.name = name
        self.description = description
        self.login = login
        self.steps = steps
        self.repeatMode = repeatMode
        self.variables = variables
        self.stepTimeout = stepTimeout
        self.source = source
    }
}

/// Whether a closed-model user runs the profile once, or again and again until its phase ends.
public enum RepeatMode: String, Sendable, Equatable {
    case once
    case forever
}

/// Choices for the login step. `nil` means "the command line's or the default".
public struct LoginOptions: Sendable, Equatable {
    /// The SASL mechanism to force; nil: the strongest offered.
    public var mechanism: SASLMechanism?
    public var tls: TLSMode?
    /// The resource to bind; default `xmppload`.
    public var resource: Template
    /// Register the account with XEP-0077 before logging in.
    public var register: Bool
    /// The login protocol (`mode: auto|classic|sasl2`); nil: the command line's `--login`, else auto.
    public var mode: LoginMode?
    /// Ask for XEP-0484 FAST tokens where SASL2 offers FAST and use them on the session's next
    /// connections (`fast: false` turns it off); nil: on.
    public var fast: Bool?

    public init(
        mechanism: SASLMechanism? = nil, tls: TLSMode? = nil, resource: Template = Template(literal: "xmppload"),
        register: Bool = false, mode: LoginMode? = nil, fast: Bool? = nil
    ) {
        self.mechanism = mechanism
        self.tls = tls
        self.resource = resource
        self.register = register
        self.mode = mode
        self.fast = fast
    }

    /// `self` with unset fields taken from `defaults`.
    public func merged(over defaults: LoginOptions, resourceSet: Bool) -> LoginOptions {
        LoginOptions(
            mechanism: mechanism ?? defaults.mechanism, tls: tls ?? defaults.tls,
            resource: resourceSet ? resource : defaults.resource, register: register || defaults.register,
            mode: mode ?? defaults.mode, fast: fast ?? defaults.fast)
    }
}

/// A profile with its share of the sessions in a run.
public struct WeightedProfile: Sendable, Equatable {
    public var weight: Double
    public var profile: Profile
    public var path: String
    /// The profile file's bytes, for the manifest's hash.
    public var bytes: [UInt8]

    public init(weight: Double, profile: Profile, path: String, bytes: [UInt8]) {
        self.weight = weight
        self.profile = profile
        self.path = path
        self.bytes = bytes
    }
}

/// What a profile file defines: one profile (weight 1) or a weighted mix, and optionally a load
/// plan, thresholds and the run's server endpoints.
public struct RunDefinition: Sendable, Equatable {
    public var profiles: [WeightedProfile]
    public var plan: LoadPlan?
    /// The file's `thresholds:` (each parsed once); the command line's `--threshold`s add to them.
    public var thresholds: [Threshold]
    /// The file's `servers:` as written (`serverEndpoints()` renders them); empty: none. `--server`
    /// replaces them entirely.
    public var servers: [ServerEntry]
    /// The `variables:` of the file that is run (a plain profile's own, or a mix file's), which
    /// `servers:` entries may use; `--var` overrides them.
    public var variables: [String: String]
    /// The file's `churn:` (deliberate drops across the run); `--churn` replaces it.
    public var churn: ChurnRate?
    public var source: String

    public init(
        profiles: [WeightedProfile], plan: LoadPlan?, thresholds: [Threshold] = [], servers: [ServerEntry] = [],
        variables: [String: String] = [:], churn: ChurnRate? = nil, source: String
    ) {
        self.profiles = profiles
        self.plan = plan
        self.thresholds = thresholds
        self.servers = servers
        self.variables = variables
        self.churn = churn
        self.source = source
    }
}
