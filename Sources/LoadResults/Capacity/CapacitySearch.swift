// The capacity search as a value: which load to try next, from the outcomes of the steps so far.

/// The search of `xmppload capacity`: the largest load whose step passes every service-level rule.
///
/// A state machine without I/O or clock: `next` is the step to run (or the answer), `record` takes
/// that step's outcome. Loads are in the searched dimension's unit (logins/s for an open model,
/// sessions for a closed one; `integral` rounds to whole sessions).
///
/// The rules:
/// - **Climb**: `start`, then ×`growth` (2) per passing step, capped at `max`. A pass at `max` ends
///   the search: the capacity is at least `max` (`.reachedMax`). A fail or a collapse ends the climb.
/// - **Bisect** between the last pass and the first fail until they are within `resolution` of the
///   last pass (a fraction: 0.05 = 5 %; closed models also stop at 1 session apart).
/// - **Confirm**: the last pass is run once more. A pass: the capacity (`.found`). A fail: step down
///   to the next lower load that passed and confirm that (`steppedDown` lists the knees that did
///   not hold); no lower pass left: `.firstStepFailed`.
/// - A **collapse** (most sessions failing) or an **overload** (latency far past a rule) counts as a
///   fail and is never climbed past; after `maxCollapses` collapsed steps the search stops bisecting
///   and confirms the last pass, so a broken server is hammered at most that many times (an
///   overloaded one is merely slow: bisecting goes on).
/// - A step whose **generator** was the limit ends the search (`.generatorLimited`): no answer.
/// - A fail (or collapse) at the very first step ends it: `.firstStepFailed`.
/// - A **ladder** (`bisects` false: generators of one search, `--segment`, which cannot agree on a
///   bisect) only climbs, ×`growth` per step: the first fail ends it with the last pass as the
///   capacity, resolved to the growth factor (`.found(resolved: false)`), no repeat.
///
/// Invariants: every asked load is in `start...max`; no load above a failed one is asked after it
/// failed; the search ends (at most `log2(max/start) + log2(1/resolution) + passes + 2` steps).
public struct CapacitySearch: Sendable, Equatable {
    /// What the command line asked for.
    public struct Settings: Sendable, Equatable {
        public var start: Double
        public var max: Double
        /// Stop bisecting when first fail − last pass ≤ resolution × last pass (0.05 = 5 %).
        public var resolution: Double
        /// Closed models: loads are whole sessions.
        public var integral: Bool
        public var growth: Double
        /// Collapsed steps after which bisecting stops.
        public var maxCollapses: Int
        /// False: a fixed ladder that only climbs (several generators, `--segment`).
        public var bisects: Bool

        public init(
            start: Double, max: Double, resolution: Double = 0.05, integral: Bool = false, growth: Double = 2, maxCollapses: Int = 2,
            bisects: Bool = true
        ) {
            self.start = start
            self.max = max
            self.resolution = resolution
            self.integral = integral
            self.growth = growth
            self.maxCollapses = maxCollapses
            self.bisects = bisects
        }

        /// The ladder's loads from `start` (×`growth`, the last one `max`): every step a ladder can ask.
        public var ladder: [Double] {
            var loads: [Double] = []
            var load = CapacitySearch.clamp(start, self)
            while loads.count < 1000 {
                loads.append(load)
                if load >= max { break }
                load = CapacitySearch.grown(load, self)
            }
            return loads
        }
    }

    /// How a step went, as the search sees it.
    public enum Outcome: String, Sendable, Equatable, Codable {
        /// Every rule passed.
        case pass
        /// A rule failed.
        case fail
        /// Most sessions failed: the server broke. Counts toward `maxCollapses`.
        case collapse
        /// A latency rule failed by far (more than 5× its limit): the server is overloaded, not
        /// broken. A fail that is cut short; it does not count toward `maxCollapses`.
        case overload
        /// The generator saturated or could not offer the asked load: the step says nothing of the server.
        case generatorLimited = "generator-limited"
    }

    /// Why a step was asked.
    public enum Purpose: String, Sendable, Equatable, Codable {
        case climb, bisect, confirm
    }

    /// The end of the search.
    public enum Answer: Sendable, Equatable {
        /// The largest load that passed (and passed again when repeated); `firstFail` is the
        /// lowest load that failed (nil: none did), `resolved` false when bisecting stopped early
        /// (collapses).
        case found(capacity: Double, firstFail: Double?, resolved: Bool)
        /// Every step up to `max` passed: the capacity is at least `max`.
        case reachedMax(Double)
        /// The first step (or every confirmed step) failed: the capacity is below `start`.
        case firstStepFailed
        /// The step at this load was limited by the generator.
        case generatorLimited(Double)
    }

    /// What to do now.
    public enum Next: Sendable, Equatable {
        case step(load: Double, purpose: Purpose)
        case done(Answer)
    }

    public let settings: Settings
    public private(set) var next: Next
    /// The passing loads, in the order they passed.
    public private(set) var passes: [Double] = []
    /// The lowest failed load so far.
    public private(set) var firstFail: Double?
    /// Knees whose repeat failed, in order.
    public private(set) var steppedDown: [Double] = []
    public private(set) var collapses = 0
    /// Bisecting stopped before the resolution was reached.
    public private(set) var stoppedEarly = false

    public init(_ settings: Settings) {
        self.settings = settings
        next = .step(load: Self.clamp(settings.start, settings), purpose: .climb)
    }

    /// The climb's next load after `load`: ×`growth`, at least one session more for whole sessions.
    static func grown(_ load: Double, _ settings: Settings) -> Double {
        let next = clamp(load * settings.growth, settings)
        return settings.integral && next <= load ? clamp(load + 1, settings) : next
    }

    static func clamp(_ load: Double, _ settings: Settings) -> Double {
        let bounded = Swift.min(Swift.max(load, settings.start), settings.max)
        return settings.integral ? bounded.rounded() : bounded
    }

    /// The highest load that passed and is below the lowest failure (the knee candidate).
    public var lastPass: Double? {
        passes.filter { load in firstFail.map { load < $0 } ?? true }.max()
    }

    /// Takes the outcome of the step `next` asked for. Ignored once the search is done.
    public mutating func record(_ outcome: Outcome) {
        guard case .step(let load, let purpose) = next else { return }
        if outcome == .generatorLimited {
            next = .done(.generatorLimited(load))
            return
        }
        if outcome == .collapse { collapses += 1 }
        let passed = outcome == .pass
        switch purpose {
        case .climb:
            if passed {
                passes.append(load)
                if load >= settings.max {
                    next = .done(.reachedMax(load))
                } else {
                    next = .step(load: Self.grown(load, settings), purpose: .climb)
                }
            } else {
                firstFail = load
                if !settings.bisects, let low = lastPass {
                    stoppedEarly = true
                    next = .done(.found(capacity: low, firstFail: load, resolved: false))
                } else {
                    next = passes.isEmpty ? .done(.firstStepFailed) : bisectOrConfirm()
                }
            }
        case .bisect:
            if passed { passes.append(load) } else { firstFail = Swift.min(firstFail ?? load, load) }
            next = bisectOrConfirm()
        case .confirm:
            if passed {
                next = .done(.found(capacity: load, firstFail: firstFail, resolved: !stoppedEarly))
            } else {
                steppedDown.append(load)
                firstFail = Swift.min(firstFail ?? load, load)
                passes.removeAll { $0 >= load }
                if let lower = passes.max() {
                    next = .step(load: lower, purpose: .confirm)
                } else {
                    next = .done(.firstStepFailed)
                }
            }
        }
    }

    /// The midpoint between the last pass and the first fail, or the confirmation once they are
    /// within the resolution (or too many collapses).
    private mutating func bisectOrConfirm() -> Next {
        guard let low = lastPass else { return .done(.firstStepFailed) }
        guard let high = firstFail else { return .step(load: low, purpose: .confirm) }
        if collapses >= settings.maxCollapses {
            stoppedEarly = high - low > gap(low)
            return .step(load: low, purpose: .confirm)
        }
        guard high - low > gap(low) else { return .step(load: low, purpose: .confirm) }
        var middle = (low + high) / 2
        if settings.integral {
            middle = middle.rounded(.down)
            if middle <= low || middle >= high { return .step(load: low, purpose: .confirm) }
        }
        return .step(load: middle, purpose: .bisect)
    }

    /// How close the last pass and the first fail must come.
    private func gap(_ low: Double) -> Double {
        settings.integral ? Swift.max(1, settings.resolution * low) : settings.resolution * low
    }
}
