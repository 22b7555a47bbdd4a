/// Which endpoint of a run each profile's session connects to: a profile's `transport:` restricts it
/// to the run's endpoints of that transport, spread by weight among those (`WeightedEndpoints` over
/// the subset); a profile with `transport: any` spreads over them all, exactly as a run without
/// transports does.
///
/// The pick is a pure function of (profile, run-wide arrival index), so every `--segment` of a run
/// and every rerun agree. Invariant: every profile has at least one endpoint (`init` throws naming
/// each profile that has none).
public struct ProfileEndpoints: Sendable, Equatable {
    /// Every endpoint of the run, in the order given; picks are indexes into it.
    public let endpoints: [WeightedEndpoint]
    /// Per profile (in the run's order), the spread over the endpoints its transport allows.
    let spreads: [WeightedEndpoints]
    /// Per profile, where each endpoint of its spread stands in `endpoints`.
    let positions: [[Int]]

    /// - Parameters:
    ///   - endpoints: the run's endpoints (at least one).
    ///   - profiles: each profile's name and transport, in the run's order.
    public init(endpoints: [WeightedEndpoint], profiles: [(name: String, transport: ProfileTransport)]) throws(TransportMismatchError) {
        var spreads: [WeightedEndpoints] = []
        var positions: [[Int]] = []
        var missing: [TransportMismatchError.Missing] = []
        for (index, profile) in profiles.enumerated() {
            let allowed = endpoints.indices.filter { profile.transport.allows(endpoints[$0].transport) }
            guard let spread = WeightedEndpoints(allowed.map { endpoints[$0] }) else {
                missing.append(.init(index: index, profile: profile.name, transport: profile.transport))
                continue
            }
            spreads.append(spread)
            positions.append(allowed)
        }
        guard missing.isEmpty else {
            throw TransportMismatchError(missing: missing, available: Set(endpoints.map(\.transport.name)).sorted())
        }
        self.endpoints = endpoints
        self.spreads = spreads
        self.positions = positions
    }

    /// The endpoint (an index into `endpoints`) of the run's arrival `index` when it runs profile
    /// `profile` (an index into the run's profiles).
    public func endpoint(forProfile profile: Int, arrival index: Int) -> Int {
        positions[profile][spreads[profile].position(forArrival: index)]
    }

    /// Checks that every profile of `definition` has an endpoint among `endpoints`; throws naming
    /// each one that has none.
    public static func check(_ definition: RunDefinition, endpoints: [WeightedEndpoint]) throws(TransportMismatchError) {
        _ = try ProfileEndpoints(endpoints: endpoints, profiles: definition.profiles.map { ($0.profile.name, $0.profile.transport) })
    }

    /// `check`'s view: the profiles of `definition` whose transport has no endpoint among the file's
    /// own `servers:`, each at its `transport:` key; none when the file has no `servers:` (the
    /// endpoints are only known at run time then) or they do not render.
    public static func problems(of definition: RunDefinition) -> [ProfileProblem] {
        guard !definition.servers.isEmpty, let endpoints = try? definition.serverEndpoints() else { return [] }
        do {
            try check(definition, endpoints: endpoints)
            return []
        } catch {
            return zip(error.missing, error.lines).map { missing, line in
                let profile = definition.profiles[missing.index].profile
                return ProfileProblem(
                    location: profile.transportLocation ?? SourceLocation(file: profile.source, line: 1, column: 1),
                    message: line, hint: "the endpoints are \(definition.source)'s `servers:`; or change the profile's transport")
            }
        }
    }
}

/// Profiles whose `transport:` matches no endpoint of the run: the run is refused before it starts.
/// `description` is one line per profile naming the profile, its transport and what to add.
public struct TransportMismatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A profile without an endpoint of its transport.
    public struct Missing: Sendable, Equatable {
        /// The profile's place in the run's profiles.
        public let index: Int
        public let profile: String
        public let transport: ProfileTransport
    }

    /// In the run's order of profiles.
    public let missing: [Missing]
    /// The transports the run's endpoints do have (`tcp`, `websocket`, `bosh`), sorted.
    public let available: [String]

    /// One line per profile.
    public var lines: [String] {
        missing.map {
            "profile '\($0.profile)' has transport: \($0.transport.rawValue) but the run has no \($0.transport.rawValue) endpoint"
                + " (it has \(available.isEmpty ? "none" : available.joined(separator: ", "))):"
                + " add one with --server \($0.transport.endpointExample) or in `servers:`"
        }
    }

    public var description: String { lines.joined(separator: "\n") }
}
