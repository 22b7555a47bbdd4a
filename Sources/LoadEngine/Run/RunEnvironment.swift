import LoadProfile
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// Everything about a run that every session on every event loop reads and nobody changes once the
/// run started: where the server is, which accounts, TLS, the compiled profiles, metric ids.
///
/// Immutable (apart from the `OnlineDirectory`, which is lock-free by design), hence `Sendable`.
final class RunEnvironment: Sendable {
    let configuration: RunConfiguration
    let runID: String
    let server: SocketAddress
    /// Every endpoint's address (`configuration.endpoints`, resolved once), and how sessions spread
    /// over them by weight (nil: one server, `server`).
    let endpointAddresses: [SocketAddress]
    let endpointSpread: WeightedEndpoints?
    /// `--source`: local addresses connections bind to, round robin (nil: the kernel chooses).
    let sourceAddresses: [SocketAddress]
    let tls: TLSSetup?
    let directory: OnlineDirectory
    /// The profiles of the mix, compiled once (each with its own login options and variables), with
    /// cumulative weights for picking one per session.
    let scripts: [SessionScript]
    let cumulativeWeights: [Double]
    let registry: MetricRegistry
    /// What every session reads: domain, accounts, password, run id, fixed metric ids.
    let settings: SessionSettings
    /// The origin of the session clock (`SessionInstant` zero; message stamps count from it).
    let clockOrigin: NIODeadline
    /// The run's seed: each session's generator derives from (seed, user index).
    let seed: UInt64

    init(
        configuration: RunConfiguration, runID: String, server: SocketAddress, tls: TLSSetup?,
        definition: RunDefinition, seed: UInt64, clockOrigin: NIODeadline
    ) {
        self.seed = seed
        self.configuration = configuration
        self.runID = runID
        self.server = server
        if configuration.endpoints.count > 1, let spread = WeightedEndpoints(configuration.endpoints) {
            endpointSpread = spread
            endpointAddresses = spread.all.map { (try? SocketAddress.makeAddressResolvingHost($0.host, port: $0.port)) ?? server }
        } else {
            endpointSpread = nil
            endpointAddresses = [server]
        }
        sourceAddresses = configuration.sourceAddresses?.addresses.compactMap { try? SocketAddress(ipAddress: $0, port: 0) } ?? []
        self.tls = tls
        self.directory = OnlineDirectory(capacity: configuration.accounts.count)
        var registry = MetricRegistry()
        let metrics = FixedMetrics(registry: &registry)
        let overrides = SessionScript.Overrides(
            tls: configuration.tls, mechanism: configuration.mechanism,
            reconnectAttempts: configuration.reconnectAttempts)
        var scripts: [SessionScript] = []
        var cumulative: [Double] = []
        var total = 0.0
        for entry in definition.profiles {
            scripts.append(SessionScript(profile: entry.profile, registry: &registry, overrides: overrides))
            total += entry.weight
            cumulative.append(total)
        }
        self.scripts = scripts
        self.cumulativeWeights = cumulative
        self.registry = registry
        self.clockOrigin = clockOrigin
        settings = SessionSettings(
            domain: configuration.domain, accountPrefix: configuration.accountPrefix,
            accounts: configuration.accounts, password: configuration.password,
            runID: runID, tlsAvailable: tls != nil, metrics: metrics,
            maxSCRAMIterations: configuration.maxSCRAMIterations)
    }

    /// A loop deadline on the session clock.
    func instant(_ deadline: NIODeadline) -> SessionInstant {
        SessionInstant(nanoseconds: Int64(clamping: deadline.uptimeNanoseconds) &- Int64(clamping: clockOrigin.uptimeNanoseconds))
    }

    /// The loop deadline of a session instant (the inverse of `instant(_:)`).
    func deadline(_ instant: SessionInstant) -> NIODeadline {
        let nanos = Int64(clamping: clockOrigin.uptimeNanoseconds).addingReportingOverflow(instant.nanoseconds)
        return .uptimeNanoseconds(UInt64(max(nanos.overflow ? Int64.max : nanos.partialValue, 0)))
    }

    /// The endpoint (an index into `endpointAddresses`) of the run's arrival `index`, by weight.
    func endpoint(forArrival index: Int) -> Int {
        guard let spread = endpointSpread else { return 0 }
        let chosen = spread.endpoint(forArrival: index)
        return spread.all.firstIndex(of: chosen) ?? 0
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
