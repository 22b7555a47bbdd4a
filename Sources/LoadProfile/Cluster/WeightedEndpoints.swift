/// The endpoints of a run and a deterministic spread of sessions over them by weight: arrival n
/// always goes to the same endpoint (`endpoint(forArrival:)`), whatever generator or event loop
/// runs it, so a segment's sessions and a rerun land where they did before.
///
/// Only the preferred tier (the lowest priority value) receives sessions; the other tiers are kept
/// in `fallbacks` in the order a client tries them. Within the tier the spread follows the weights
/// exactly over every cycle of `cycle.count` arrivals, interleaved (smooth weighted round robin:
/// weights 3,1 give a,a,b,a — not a,a,a,b). Weights are apportioned to a cycle of at most
/// `maximumCycle` slots (SRV weights up to 65,535), and a tier whose weights are all 0 is spread
/// evenly. Invariant: at least one endpoint, and `cycle` indexes into `preferred`.
public struct WeightedEndpoints: Sendable, Equatable {
    /// Every endpoint as given.
    public let all: [WeightedEndpoint]
    /// The endpoints that receive sessions (lowest priority value), in the order given.
    public let preferred: [WeightedEndpoint]
    /// The other endpoints, by priority then order given.
    public let fallbacks: [WeightedEndpoint]
    /// One cycle of picks: indexes into `preferred`.
    public let cycle: [Int]
    /// Where each of `preferred` stands in `all`.
    public let preferredPositions: [Int]

    public static let maximumCycle = 4096

    /// nil when `endpoints` is empty.
    public init?(_ endpoints: [WeightedEndpoint]) {
        guard let best = endpoints.map(\.priority).min() else { return nil }
        all = endpoints
        preferred = endpoints.filter { $0.priority == best }
        preferredPositions = endpoints.indices.filter { endpoints[$0].priority == best }
        fallbacks = endpoints.enumerated().filter { $0.element.priority != best }
            .sorted { ($0.element.priority, $0.offset) < ($1.element.priority, $1.offset) }.map(\.element)
        cycle = Self.smoothCycle(slots: Self.apportion(preferred.map { max(0, $0.weight) }))
    }

    /// The endpoint for the n-th arrival of the run (0-based, the run-wide index, so segments agree).
    public func endpoint(forArrival index: Int) -> WeightedEndpoint {
        preferred[cycle[Int(UInt(bitPattern: index) % UInt(cycle.count))]]
    }

    /// Where `endpoint(forArrival: index)` stands in `all` (unambiguous when an endpoint is listed twice).
    public func position(forArrival index: Int) -> Int {
        preferredPositions[cycle[Int(UInt(bitPattern: index) % UInt(cycle.count))]]
    }

    /// Whole slots per endpoint for one cycle, proportional to `weights` (largest remainder), each
    /// endpoint with a positive weight keeping at least one slot; all zero: one slot each.
    static func apportion(_ weights: [Int]) -> [Int] {
        let total = weights.reduce(0, +)
        guard total > 0 else { return weights.map { _ in 1 } }
        var divisor = 0
        for weight in weights { divisor = gcd(divisor, weight) }
        let reduced = weights.map { $0 / divisor }
        let reducedTotal = total / divisor
        guard reducedTotal > maximumCycle else { return reduced }
        let size = maximumCycle
        var slots = reduced.map { $0 == 0 ? 0 : max(1, $0 * size / reducedTotal) }
        let remainders = reduced.enumerated().map { ($0.offset, ($0.element * size) % reducedTotal) }
            .sorted { $0.1 > $1.1 }
        var spare = size - slots.reduce(0, +)
        for (index, _) in remainders where spare > 0 && reduced[index] > 0 {
            slots[index] += 1
            spare -= 1
        }
        return slots
    }

    /// Smooth weighted round robin (as in nginx) over one cycle: each step adds every weight to its
    /// running credit, picks the largest credit (first on ties) and takes the total off it.
    static func smoothCycle(slots: [Int]) -> [Int] {
        let total = slots.reduce(0, +)
        var credit = slots.map { _ in 0 }
        var cycle: [Int] = []
        cycle.reserveCapacity(total)
        for _ in 0..<total {
            var best = 0
            for index in slots.indices {
                credit[index] += slots[index]
                if credit[index] > credit[best] { best = index }
            }
            credit[best] -= total
            cycle.append(best)
        }
        return cycle
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
