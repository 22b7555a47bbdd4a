import LoadProfile
import LoadResults
import NIOCore
import XMPPCore

/// Everything about a run that every session on every event loop reads and nobody changes once the
/// run started: where the server is, which accounts, TLS, the compiled profiles, metric ids.
///
/// Immutable (apart from the `OnlineDirectory`, which is lock-free by design), hence `Sendable`.
final class RunEnvironment: Sendable {
    let configuration: RunConfiguration
    let runID: String
    let server: SocketAddress
    let tls: TLSSetup?
    let directory: OnlineDirectory
    /// The profiles of the mix, compiled, with cumulative weights for picking one per session.
    let scripts: [SessionScript]
    let cumulativeWeights: [Double]
    let registry: MetricRegistry
    let metrics: FixedMetrics
    /// The origin of every monotonic nanosecond reading the run reports (e.g. in message stamps).
    let clockOrigin: NIODeadline
    /// The run's seed: each session's generator derives from (seed, user index).
    let seed: UInt64
    /// `${name}` values every profile may use besides the per-session ones.
    let variables: [String: String]

    init(configuration: RunConfiguration, runID: String, server: SocketAddress, tls: TLSSetup?,
         definition: RunDefinition, seed: UInt64, clockOrigin: NIODeadline) {
        self.seed = seed
        self.configuration = configuration
        self.runID = runID
        self.server = server
        self.tls = tls
        self.directory = OnlineDirectory(capacity: configuration.accounts.count)
        var registry = MetricRegistry()
        metrics = FixedMetrics(registry: &registry)
        var scripts: [SessionScript] = []
        var cumulative: [Double] = []
        var total = 0.0
        var variables: [String: String] = [:]
        for entry in definition.profiles {
            scripts.append(SessionScript(profile: entry.profile, registry: &registry))
            total += entry.weight
            cumulative.append(total)
            variables.merge(entry.profile.variables) { first, _ in first }
        }
        self.scripts = scripts
        self.cumulativeWeights = cumulative
        self.registry = registry
        self.clockOrigin = clockOrigin
        self.variables = variables
    }

    /// Nanoseconds since the run's clock origin.
    func nanos(_ deadline: NIODeadline) -> UInt64 {
        deadline >= clockOrigin ? UInt64((deadline - clockOrigin).nanoseconds) : 0
    }

    /// The script for a session, chosen by weight with the session's own generator.
    func pickScript(using rng: inout some RandomNumberGenerator) -> SessionScript {
        if scripts.count == 1 { return scripts[0] }
        let total = cumulativeWeights.last ?? 1
        let point = Double.random(in: 0..<total, using: &rng)
        let index = cumulativeWeights.firstIndex { point < $0 } ?? scripts.count - 1
        return scripts[index]
    }
}

/// Metric ids the engine records whatever the profile says.
struct FixedMetrics: Sendable {
    let login: MetricID
    let phases: [MetricID]   // indexed like LoginPhase.allCases
    let message: MetricID
    let mucMessage: MetricID
    let logout: MetricID

    init(registry: inout MetricRegistry) {
        login = registry.register("login")
        phases = LoginPhase.allCases.map { registry.register($0.metricName) }
        message = registry.register("message")
        mucMessage = registry.register("muc.message")
        logout = registry.register("logout")
    }

    func phase(_ phase: LoginPhase) -> MetricID {
        phases[LoginPhase.allCases.firstIndex(of: phase)!]
    }
}
