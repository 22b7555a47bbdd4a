import Foundation

/// When each arrival of a plan is due: a pure function of the arrival's index, computed in closed form
/// (no simulation, no queue), so every event loop and every generator segment can compute its own
/// share independently.
///
/// Arrivals are numbered 0, 1, 2, … across all phases in order. Within a phase starting at `S`:
/// - closed(N users, ramp R): user i at S + R·i/N;
/// - rampingUsers(a → b) over D: users below a at S, user i ≥ a at S + D·(i − a + 1)/(b − a);
/// - openConstant(r) over D: ⌊r·D⌋ arrivals, arrival k at S + k/r;
/// - openRamping(r1 → r2) over D: the rate grows linearly, so the expected count by t is
///   C(t) = r1·t + (r2 − r1)·t²/(2D); arrival k is at the t where C(t) = k (k6's
///   ramping-arrival-rate), ⌊C(D)⌋ arrivals in all.
public struct ArrivalSchedule: Sendable {
    public let plan: LoadPlan
    /// Arrivals per phase and cumulative first index per phase.
    public let counts: [Int]
    private let firstIndex: [Int]
    private let phaseStarts: [Duration]

    public init(plan: LoadPlan) {
        self.plan = plan
        var counts: [Int] = []
        var first: [Int] = []
        var starts: [Duration] = []
        var total = 0
        var start = Duration.zero
        for phase in plan.phases {
            let count = Self.arrivalCount(phase)
            first.append(total)
            counts.append(count)
            starts.append(start)
            total += count
            start += phase.duration
        }
        self.counts = counts
        self.firstIndex = first
        self.phaseStarts = starts
    }

    /// Total arrivals of the plan (before any cap).
    public var totalArrivals: Int { counts.reduce(0, +) }

    /// Where arrival `n` falls: its phase and its offset from the run's start; nil past the last one
    /// (or past the plan's duration cap).
    public func arrival(_ n: Int) -> (phase: Int, offset: Duration)? {
        guard n >= 0 else { return nil }
        for phase in plan.phases.indices where n < firstIndex[phase] + counts[phase] {
            let local = n - firstIndex[phase]
            let offset = phaseStarts[phase] + Self.localOffset(plan.phases[phase], local)
            if let cap = plan.durationCap, offset >= cap { return nil }
            return (phase, offset)
        }
        return nil
    }

    public func phaseStart(_ phase: Int) -> Duration { phaseStarts[phase] }

    /// The global index of a phase's first arrival.
    public func firstArrival(ofPhase phase: Int) -> Int { firstIndex[phase] }

    /// How many of a phase's arrivals fall in `segment` (they differ by at most one between segments,
    /// and add up to `counts[phase]` over all segments of the same count).
    public func arrivals(inPhase phase: Int, segment: Segment) -> Int {
        segment.arrivals(before: firstIndex[phase] + counts[phase]) - segment.arrivals(before: firstIndex[phase])
    }

    /// When a phase ends (its closed users stop repeating then).
    public func phaseEnd(_ phase: Int) -> Duration {
        let end = phaseStarts[phase] + plan.phases[phase].duration
        guard let cap = plan.durationCap else { return plan.phases[phase].endsWhenIdle ? .seconds(365 * 86400) : end }
        return plan.phases[phase].endsWhenIdle ? cap : min(end, cap)
    }

    /// True when the phase's session limit is reached. A segment gets its share of the limit (the
    /// shares of all N segments add up to it), so N generators together keep to it.
    public func isAtCapacity(phase: Int, live: Int, segment: Segment = .whole) -> Bool {
        guard let limit = plan.phases[phase].maxSessions else { return false }
        return live >= segment.share(ofCount: limit)
    }

    /// Sessions expected to have *started* by `time` (for `plan`).
    public func startedArrivals(by time: Duration) -> Int {
        var started = 0
        for phase in plan.phases.indices {
            let start = phaseStarts[phase]
            guard time >= start else { break }
            let local = time - start
            let count = counts[phase]
            // Binary search: the number of local arrivals with offset <= local.
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                if Self.localOffset(plan.phases[phase], mid) <= local { low = mid + 1 } else { high = mid }
            }
            started += low
        }
        return started
    }

    static func arrivalCount(_ phase: LoadPhase) -> Int {
        let seconds = phase.duration.seconds
        switch phase.model {
        case .closed(let users, _): return max(users, 0)
        case .rampingUsers(let from, let to): return max(from, to, 0)
        case .openConstant(let rate): return rate > 0 ? wholeArrivals(rate * seconds) : 0
        case .openRamping(let from, let to): return wholeArrivals((from + to) / 2 * seconds)
        }
    }

    /// ⌊expected⌋ (with a little slack for rounding), clamped to 0 ... 10¹⁵ so that absurd rates from
    /// the command line cannot trap the conversion.
    static func wholeArrivals(_ expected: Double) -> Int {
        guard expected.isFinite, expected > 0 else { return 0 }
        return Int(min((expected + 1e-9).rounded(.down), 1e15))
    }

    static func localOffset(_ phase: LoadPhase, _ k: Int) -> Duration {
        let seconds = phase.duration.seconds
        switch phase.model {
        case .closed(let users, let ramp):
            guard users > 0 else { return .zero }
            return .nanoseconds(Int64(Double(ramp.nanoseconds) * Double(k) / Double(users)))
        case .rampingUsers(let from, let to):
            guard k >= from, to > from else { return .zero }
            return .nanoseconds(Int64(Double(phase.duration.nanoseconds) * Double(k - from + 1) / Double(to - from)))
        case .openConstant(let rate):
            return .nanoseconds(Int64(Double(k) / rate * 1e9))
        case .openRamping(let from, let to):
            let a = (to - from) / (2 * seconds)
            let b = from
            let t: Double
            if abs(a) < 1e-12 {
                t = b > 0 ? Double(k) / b : 0
            } else {
                let discriminant = max(0, b * b + 4 * a * Double(k))
                t = (-b + discriminant.squareRoot()) / (2 * a)
            }
            return .nanoseconds(Int64(min(max(t, 0), seconds) * 1e9))
        }
    }
}
