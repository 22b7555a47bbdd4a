/// RFC 2782's fallback order over a run's endpoints, precomputed once so that a session walks it
/// with two integers and no allocation: where a session whose connect failed goes next.
///
/// A session's order is: its first choice (the weighted spread over the preferred priority,
/// `WeightedEndpoints.position(forArrival:)`); then the rest of that priority; then each higher
/// priority value in turn, all of it. Within a priority the targets follow one weighted random
/// order drawn once per run with RFC 2782's rule (`SRVSelection.order`, from the run's seeded
/// generator), entered where the session stands: in the preferred priority after the session's
/// first choice, in a later priority at that priority's own weighted spread for the arrival (smooth
/// weighted round robin, like the first choice), so the sessions that fall back spread over a tier
/// by weight instead of all landing on one target. Every endpoint appears exactly once in a
/// session's order.
///
/// Positions are indexes into the endpoint list given to `init` (the run's `endpoints`, in order).
/// Invariant: `tiers` holds every position once, ascending by priority; `spreads[t]` indexes into
/// `tiers[t]`; `rank[p]` is where position p stands in its tier.
public struct SRVFallbackOrder: Sendable, Equatable {
    /// Per priority value (ascending), its endpoints' positions in the tier's weighted order.
    public let tiers: [[Int]]
    /// Per position, its index within its tier's order.
    let rank: [Int]
    /// Per position, its tier.
    let tierOf: [Int]
    /// Per tier, the deterministic weighted spread of arrivals over its order (`WeightedEndpoints`
    /// over the tier's endpoints in `tiers[t]` order).
    let spreads: [WeightedEndpoints]

    /// How many endpoints a session may try in one connection attempt (its first choice included).
    public var count: Int { rank.count }

    /// nil when `endpoints` is empty. `generator` draws each tier's weighted order once (seed it
    /// from the run's seed, so a rerun and every `--segment` fall back alike).
    public init?<Generator: RandomNumberGenerator>(_ endpoints: [WeightedEndpoint], using generator: inout Generator) {
        guard !endpoints.isEmpty else { return nil }
        let priorities = Set(endpoints.map(\.priority)).sorted()
        var tiers: [[Int]] = []
        var rank = [Int](repeating: 0, count: endpoints.count)
        var tierOf = [Int](repeating: 0, count: endpoints.count)
        var spreads: [WeightedEndpoints] = []
        for (tierIndex, priority) in priorities.enumerated() {
            let members = endpoints.indices.filter { endpoints[$0].priority == priority }
            // SRVSelection works on records; the record's target carries the position.
            let records = members.map {
                SRVRecord(
                    priority: 0, weight: UInt16(clamping: max(0, endpoints[$0].weight)), port: 0, target: String($0))
            }
            let ordered = SRVSelection.order(records, using: &generator).compactMap { Int($0.target) }
            for (index, position) in ordered.enumerated() {
                rank[position] = index
                tierOf[position] = tierIndex
            }
            tiers.append(ordered)
            // The tier's own spread, indexes into `ordered`; priorities flattened to one tier.
            spreads.append(WeightedEndpoints(ordered.map { WeightedEndpoint(host: "", port: 1, weight: endpoints[$0].weight) })!)
        }
        self.tiers = tiers
        self.rank = rank
        self.tierOf = tierOf
        self.spreads = spreads
    }

    /// The endpoint (a position) for try number `attempt` (1 is the first fallback) of the session
    /// of run-wide arrival `arrival` whose first choice (try 0) was position `first`, which must be
    /// in the preferred (first) tier; nil when the session has tried every endpoint. O(tiers), no
    /// allocation.
    public func endpoint(attempt: Int, first: Int, arrival: Int) -> Int? {
        guard attempt > 0 else { return first }
        guard attempt < count, rank.indices.contains(first) else { return nil }
        let firstTier = tiers[tierOf[first]]
        if attempt < firstTier.count {
            return firstTier[(rank[first] + attempt) % firstTier.count]
        }
        var left = attempt - firstTier.count
        for tier in (tierOf[first] + 1)..<tiers.count {
            let members = tiers[tier]
            if left < members.count {
                let start = spreads[tier].position(forArrival: arrival)
                return members[(start + left) % members.count]
            }
            left -= members.count
        }
        return nil
    }
}
