import Atomics
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
    /// Every endpoint's address (`configuration.endpoints`, resolved before the run, off the loops:
    /// `resolveEndpointsOffLoop(of:using:)`, and again every `configuration.endpointRefresh` by
    /// `EndpointRefresh`), indexed like the endpoints below; connectors read it through a per-loop copy.
    let resolvedEndpoints: ResolvedEndpoints
    /// The name lookup for re-resolution and resumption locations (getaddrinfo; tests inject one).
    let resolver: EndpointResolver
    /// How sessions spread over the endpoints by weight (nil: one server, `server`).
    let endpointSpread: WeightedEndpoints?
    /// With several endpoints and a profile that names its `transport:`, each profile's spread over
    /// the endpoints of its transport (nil: every profile spreads over `endpointSpread`).
    let profileEndpoints: ProfileEndpoints?
    /// With several endpoints, all plain TCP: where a session whose connect failed goes next, in
    /// RFC 2782 order (`SRVFallbackOrder`, endpoint indexes); nil: no fallback.
    let endpointFallback: SRVFallbackOrder?
    /// The server node of each endpoint, for per-node figures (empty: one server, no per-node figures).
    let nodes: [ServerNode]
    /// Per endpoint index, the endpoint when it is a web transport (WebSocket, BOSH); empty when
    /// every endpoint is plain TCP, so the TCP connect path checks one `isEmpty`.
    let webEndpoints: [WeightedEndpoint?]
    /// The web transports' latency metrics (`login.ws_upgrade`, `bosh.request`, `bosh.create`).
    let transportMetrics: TransportMetrics
    /// `--source`: local addresses connections bind to, round robin (nil: the kernel chooses).
    let sourceAddresses: [SocketAddress]
    let tls: TLSSetup?
    let directory: OnlineDirectory
    /// The profiles of the mix, compiled once (each with its own login options and variables), with
    /// cumulative weights for picking one per session.
    let scripts: [SessionScript]
    /// The same profiles compiled for web-transport sessions: their login never does STARTTLS (the
    /// transport's TLS, wss/https, is the stream's); empty when no endpoint is a web transport.
    let webScripts: [SessionScript]
    let cumulativeWeights: [Double]
    let registry: MetricRegistry
    /// What every session reads: domain, accounts, password, run id, fixed metric ids.
    let settings: SessionSettings
    /// The origin of the session clock (`SessionInstant` zero; message stamps count from it).
    let clockOrigin: NIODeadline
    /// The run's seed: each session's generator derives from (seed, user index).
    let seed: UInt64
    /// this generator's clock for the stamps of a `--segment` run.
    let clock: RunClock
    /// Session connections closed so far, on every loop (what `HeapRelease` watches for waves).
    let closedConnections = ManagedAtomic<Int>(0)

    /// - Parameters:
    ///   - server: the first endpoint's address.
    ///   - endpointAddresses: with several endpoints, every endpoint's address in the order of
    ///     `configuration.endpoints` (`resolveEndpoints(of:)`); ignored (may be empty) with one.
    ///   - resolver: the name lookup for re-resolution and resumption locations.
    init(
        configuration: RunConfiguration, runID: String, server: SocketAddress, endpointAddresses: [SocketAddress] = [],
        tls: TLSSetup?, definition: RunDefinition, seed: UInt64, clockOrigin: NIODeadline, resolver: EndpointResolver = .system
    ) {
        self.seed = seed
        self.configuration = configuration
        self.runID = runID
        self.server = server
        self.resolver = resolver
        if configuration.endpoints.count > 1, let spread = WeightedEndpoints(configuration.endpoints) {
            precondition(endpointAddresses.count == spread.all.count, "every endpoint must be resolved before the run")
            endpointSpread = spread
            resolvedEndpoints = ResolvedEndpoints(endpoints: spread.all, addresses: endpointAddresses)
            nodes = spread.all.enumerated().map { ServerNode(index: $0.offset, label: ServerNodeLabel.of($0.element)) }
        } else {
            endpointSpread = nil
            // One generator per node (one endpoint each) in a run of several: its node is labelled too,
            // so stamps name it and the merged report's node × node matrix has the cross-generator cells.
            let severalGenerators = configuration.segment.count > 1 || configuration.generatorKey != nil
            let only = configuration.endpoints.first ?? WeightedEndpoint(host: configuration.host, port: configuration.port)
            nodes = severalGenerators ? [ServerNode(index: 0, label: ServerNodeLabel.of(only))] : []
            resolvedEndpoints = ResolvedEndpoints(endpoints: [only], addresses: [server])
        }
        // Indexed like `resolvedEndpoints` (the spread's order; one endpoint without a spread).
        let ordered = endpointSpread?.all ?? Array(configuration.endpoints.prefix(1))
        // A run whose profile has no endpoint of its transport is refused before it starts
        // (`checkTransports`); should one get here, its sessions take every endpoint.
        if let spread = endpointSpread, definition.profiles.contains(where: { $0.profile.transport != .any }) {
            profileEndpoints = try? ProfileEndpoints(
                endpoints: spread.all, profiles: definition.profiles.map { ($0.profile.name, $0.profile.transport) })
        } else {
            profileEndpoints = nil
        }
        webEndpoints = ordered.contains { $0.transport.isWeb } ? ordered.map { $0.transport.isWeb ? $0 : nil } : []
        // Each tier's weighted order is drawn once from the run's seed (stream: all ones, no session's).
        var fallbackGenerator = SeededGenerator(seed: seed, stream: .max)
        endpointFallback =
            configuration.endpointsFromDNS && endpointSpread != nil && webEndpoints.isEmpty
            ? SRVFallbackOrder(ordered, using: &fallbackGenerator) : nil
        sourceAddresses = configuration.sourceAddresses?.addresses.compactMap { try? SocketAddress(ipAddress: $0, port: 0) } ?? []
        self.directory = OnlineDirectory(capacity: configuration.accounts.count)
        var registry = MetricRegistry()
        registry.nodeLabels = nodes.map(\.label)
        let metrics = FixedMetrics(registry: &registry)
        transportMetrics = TransportMetrics(registry: &registry)
        let overrides = SessionScript.Overrides(
            tls: configuration.tls, mechanism: configuration.mechanism,
            reconnectAttempts: configuration.reconnectAttempts, mode: configuration.loginMode)
        var webOverrides = overrides
        webOverrides.tls = TLSMode.none
        var scripts: [SessionScript] = []
        var webScripts: [SessionScript] = []
        var cumulative: [Double] = []
        var total = 0.0
        for entry in definition.profiles {
            scripts.append(SessionScript(profile: entry.profile, registry: &registry, overrides: overrides))
            if !webEndpoints.isEmpty {
                webScripts.append(SessionScript(profile: entry.profile, registry: &registry, overrides: webOverrides))
            }
            total += entry.weight
            cumulative.append(total)
        }
        self.scripts = scripts
        self.webScripts = webScripts
        self.tls = Self.tls(tls, channelBinding: scripts.contains { $0.login.usesChannelBinding }, configuration)
        self.cumulativeWeights = cumulative
        self.registry = registry
        self.clockOrigin = clockOrigin
        clock = RunClock(clockOrigin: clockOrigin, shared: configuration.segment.count > 1 || configuration.generatorKey != nil)
        settings = SessionSettings(
            domain: configuration.domain, accountPrefix: configuration.accountPrefix,
            accounts: configuration.accounts, runAccounts: configuration.population?.accounts,
            password: configuration.password,
            runID: runID, tlsAvailable: tls != nil, metrics: metrics,
            maxSCRAMIterations: configuration.maxSCRAMIterations, generatorKey: configuration.generatorKey, seed: seed,
            writeStallTimeout: configuration.writeStallTimeout, churnResumeShare: configuration.churnResumeShare)
    }

    /// The run's TLS set-up: `given`, or — when a profile's login can bind to the channel (`-PLUS`,
    /// a bound FAST mechanism: `SessionScript.Login.usesChannelBinding`) — the same set-up with the
    /// key log that `tls-exporter` needs (`TLSSetup(channelBinding: true)`), so each handshake's
    /// channel-binding data reaches the login. Without such a profile (`--login classic` with a
    /// forced non-PLUS `--sasl`, or no TLS) nothing is read.
    private static func tls(_ given: TLSSetup?, channelBinding: Bool, _ configuration: RunConfiguration) -> TLSSetup? {
        guard let given, channelBinding, given.exporterSecrets == nil else { return given }
        return (try? TLSSetup(domain: configuration.domain, insecure: configuration.insecure, channelBinding: true)) ?? given
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

    /// Every endpoint of `configuration` resolved to an address, in order (the first is the run's
    /// `server`): `configuration.endpoints` when it has several, else `host`:`port`. Throws one error
    /// naming every endpoint that does not resolve; the run must not start then. Blocking: call it off
    /// the event loops (`resolveEndpointsOffLoop` does).
    static func resolveEndpoints(
        of configuration: RunConfiguration, using resolver: EndpointResolver = .system
    ) throws(EndpointResolutionError) -> [SocketAddress] {
        try EndpointResolution.addresses(of: names(of: configuration), using: resolver.resolve)
    }

    /// `resolveEndpoints(of:using:)` on NIO's blocking-work thread pool (an `EndpointResolutionError`
    /// when a name does not resolve).
    static func resolveEndpointsOffLoop(of configuration: RunConfiguration, using resolver: EndpointResolver) async throws -> [SocketAddress] {
        try await EndpointResolution.addressesOffLoop(of: names(of: configuration), using: resolver)
    }

    /// The endpoints a run resolves, in order: `configuration.endpoints` when it has several, else `host`:`port`.
    private static func names(of configuration: RunConfiguration) -> [WeightedEndpoint] {
        configuration.endpoints.count > 1
            ? configuration.endpoints : [WeightedEndpoint(host: configuration.host, port: configuration.port)]
    }

    /// The server node of endpoint `index` (nil for a single-server run: no per-node figures).
    func node(ofEndpoint index: Int) -> ServerNode? {
        nodes.indices.contains(index) ? nodes[index] : nil
    }

    /// Throws naming every profile of `definition` whose `transport:` has no endpoint among the
    /// run's (`configuration.endpoints`, or the one `host`:`port`, which is TCP): such a run must not start.
    static func checkTransports(of configuration: RunConfiguration, definition: RunDefinition) throws(TransportMismatchError) {
        let endpoints =
            configuration.endpoints.isEmpty ? [WeightedEndpoint(host: configuration.host, port: configuration.port)] : configuration.endpoints
        try ProfileEndpoints.check(definition, endpoints: endpoints)
    }

    /// The endpoint (an endpoint index) of the run's arrival `index`, by weight.
    func endpoint(forArrival index: Int) -> Int {
        endpointSpread?.position(forArrival: index) ?? 0
    }

    /// The endpoint (an endpoint index) of the run's arrival `index` running profile
    /// `profile` (an index into the mix): among the endpoints of the profile's transport, by weight.
    func endpoint(forArrival index: Int, profile: Int) -> Int {
        guard let profileEndpoints else { return endpoint(forArrival: index) }
        return profileEndpoints.endpoint(forProfile: profile, arrival: index)
    }

    /// The endpoint a session tries after its connect failed with `failure` on try `attempt` (0: its
    /// first choice `first`), or nil: report the failure (`EndpointFallback.next`).
    func fallbackEndpoint(after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int) -> Int? {
        EndpointFallback.next(after: failure, attempt: attempt, first: first, arrival: arrival, order: endpointFallback)
    }

    /// The profile (an index into the mix) of a session, chosen by weight with the session's own
    /// generator (no draw when there is one profile).
    func pickProfile(using rng: inout some RandomNumberGenerator) -> Int {
        if scripts.count == 1 { return 0 }
        let total = cumulativeWeights.last ?? 1
        let point = Double.random(in: 0..<total, using: &rng)
        return cumulativeWeights.firstIndex { point < $0 } ?? scripts.count - 1
    }

    /// Profile `profile` compiled for a session on `endpoint`: without STARTTLS on a web transport.
    func script(profile: Int, endpoint: Int) -> SessionScript {
        webEndpoint(endpoint) == nil ? scripts[profile] : webScripts[profile]
    }

    /// The endpoint at `index` (an endpoint index) when it is a web transport; nil for TCP.
    func webEndpoint(_ index: Int) -> WeightedEndpoint? {
        webEndpoints.isEmpty ? nil : webEndpoints[min(index, webEndpoints.count - 1)]
    }
}
