import ThresholdModel
import XMPPCore

/// The latency metrics a run can record, so a threshold naming one that cannot exist
/// (`logn.p99`) is a usage error when it is parsed, not a rule judged `no-data` at the end.
///
/// A run records the engine's fixed metrics (`login`, every login phase, every login path
/// (`login.path.fast`, …), `message`, `muc.message`,
/// `logout`, `reconnect.login`, `keepalive.ping`, `pep.notify`, the web transports' `login.ws_upgrade`,
/// `bosh.request` and `bosh.poll`) and one metric per step name of its profiles (`roster.get`,
/// `ping`, `muc.join`, …), nested steps included.
public struct MetricCatalog: Sendable, Equatable {
    /// Every metric name, sorted, each once.
    public let names: [String]

    /// The metrics the engine records whatever the profile says.
    public static let fixed: [String] =
        ["login"] + LoginPhase.allCases.map(\.metricName) + LoginPath.allCases.map(\.metricName)
        + ["message", "muc.message", "logout", "reconnect.login", "keepalive.ping", "pep.notify", "login.ws_upgrade", "bosh.request", "bosh.poll"]

    public init(names: some Sequence<String>) {
        self.names = Array(Set(names)).sorted()
    }

    /// The fixed metrics and every step name of `definition`'s profiles.
    public init(_ definition: RunDefinition) { self.init(profiles: definition.profiles) }

    /// The fixed metrics and every step name of `profiles`.
    public init(profiles: [WeightedProfile]) {
        var names = Set(Self.fixed)
        func walk(_ steps: [Step]) {
            for step in steps {
                names.insert(step.name)
                switch step.action {
                case .loop(_, let inner): walk(inner)
                case .choose(let branches): for branch in branches { walk(branch.steps) }
                default: break
                }
            }
        }
        for weighted in profiles { walk(weighted.profile.steps) }
        self.init(names: names)
    }

    /// Whether a threshold's latency metric can be recorded by this run; nil when it can (or the
    /// threshold is not about latency), else the problem with a did-you-mean.
    public func problem(with threshold: Threshold) -> (message: String, hint: String)? {
        guard case .latency(let metric, _) = threshold.quantity, !names.contains(metric) else { return nil }
        let suggestion = Spelling.closest(to: metric, in: names).map { "did you mean '\($0)'?" }
        let known = "known metrics: " + names.joined(separator: ", ")
        return ("unknown metric '\(metric)'", suggestion.map { "\($0) — \(known)" } ?? known)
    }
}
