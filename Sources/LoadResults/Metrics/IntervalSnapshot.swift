/// Everything measured during one interval (or, accumulated, a whole run), as a mergeable value.
///
/// Times are seconds since the run's start (monotonic clock). Counters, histograms and error counts
/// add when snapshots merge; gauges add too when merging the *same* interval from several loops or
/// generators (`merge`), and take the later value when accumulating intervals over time
/// (`accumulate`). Both operations are associative and commutative on what they add. Message-ledger
/// events travel with the snapshot from the loops to the collector but are not written to files.
public struct IntervalSnapshot: Sendable, Equatable, Codable {
    public var start: Double
    public var end: Double
    public var counters: [String: UInt64]
    public var gauges: [String: Int64]
    /// Latency from the intended start (corrected for coordinated omission), per metric.
    public var latency: [String: LatencyHistogram]
    /// Latency from the actual send, per metric.
    public var serviceLatency: [String: LatencyHistogram]
    /// Typed error kind → count.
    public var errors: [String: UInt64]
    /// Event-loop lag samples (every 100 ms per loop).
    public var loopLag: LatencyHistogram
    /// Generator health for this interval (set by the collector).
    public var health: GeneratorHealth?
    /// Message loss/duplication/order findings that became known in this interval.
    public var ledger: LedgerCounts
    /// Group chat fan-out per room JID.
    public var rooms: [String: RoomFanout] = [:]
    /// Occurrences folded into `-other` keys per label family (`CardinalityCap`); nil when none.
    public var folded: [String: UInt64]?
    /// Per-node figures of a run with more than one endpoint; nil otherwise (and in older files).
    public var nodes: NodeFigures?
    /// One example server text per error kind (`ErrorExamples`; first seen wins); nil when none.
    public var errorExamples: [String: String]?
    /// Failed logins by the phase they failed in and their error kind (`login_failures`); nil when none.
    public var loginFailures: [String: [String: UInt64]]?
    /// The first failed sessions per error kind with their last stanzas (`FailureForensics`); nil when none.
    public var forensics: FailureForensics?
    /// What the non-zero registered counters of this snapshot tell a person, by counter name
    /// (`CounterNotice`); nil when none (and in older files).
    public var counterNotices: [String: CounterNotice]?
    /// Message events for the ledger; not encoded.
    public var messageEvents = MessageEvents()

    enum CodingKeys: String, CodingKey {
        case start, end, counters, gauges, latency
        case serviceLatency = "service_latency"
        case errors
        case loopLag = "loop_lag"
        case health, ledger, rooms, folded, nodes
        case errorExamples = "error_examples"
        case loginFailures = "login_failures"
        case forensics
        case counterNotices = "counter_notices"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        start = try container.decode(Double.self, forKey: .start)
        end = try container.decode(Double.self, forKey: .end)
        counters = try container.decode([String: UInt64].self, forKey: .counters)
        gauges = try container.decode([String: Int64].self, forKey: .gauges)
        latency = try container.decode([String: LatencyHistogram].self, forKey: .latency)
        serviceLatency = try container.decode([String: LatencyHistogram].self, forKey: .serviceLatency)
        errors = try container.decode([String: UInt64].self, forKey: .errors)
        loopLag = try container.decode(LatencyHistogram.self, forKey: .loopLag)
        health = try container.decodeIfPresent(GeneratorHealth.self, forKey: .health)
        ledger = try container.decode(LedgerCounts.self, forKey: .ledger)
        rooms = try container.decodeIfPresent([String: RoomFanout].self, forKey: .rooms) ?? [:]
        folded = try container.decodeIfPresent([String: UInt64].self, forKey: .folded)
        nodes = try container.decodeIfPresent(NodeFigures.self, forKey: .nodes)
        errorExamples = try container.decodeIfPresent([String: String].self, forKey: .errorExamples)
        loginFailures = try container.decodeIfPresent([String: [String: UInt64]].self, forKey: .loginFailures)
        forensics = try container.decodeIfPresent(FailureForensics.self, forKey: .forensics)
        counterNotices = try container.decodeIfPresent([String: CounterNotice].self, forKey: .counterNotices)
    }

    public init(start: Double = 0, end: Double = 0) {
        self.start = start
        self.end = end
        counters = [:]
        gauges = [:]
        latency = [:]
        serviceLatency = [:]
        errors = [:]
        loopLag = LatencyHistogram()
        ledger = LedgerCounts()
    }

    public func counter(_ counter: Counter) -> UInt64 { counters[counter.name] ?? 0 }
    public func gauge(_ name: String) -> Int64 { gauges[name] ?? 0 }
    public var errorCount: UInt64 { errors.values.reduce(0, +) }

    /// Merges a snapshot of the same interval from another loop or generator.
    public mutating func merge(_ other: IntervalSnapshot) {
        start = min(start, other.start)
        end = max(end, other.end)
        addCommon(other)
        gauges.merge(other.gauges, uniquingKeysWith: +)
        health = GeneratorHealth.combine(health, other.health)
        messageEvents.append(other.messageEvents)
    }

    /// Adds a later interval into a running total.
    public mutating func accumulate(_ later: IntervalSnapshot) {
        start = min(start, later.start)
        end = max(end, later.end)
        addCommon(later)
        gauges.merge(later.gauges) { _, new in new }
        health = GeneratorHealth.accumulate(health, later.health)
    }

    public func merging(_ other: IntervalSnapshot) -> IntervalSnapshot {
        var copy = self
        copy.merge(other)
        return copy
    }

    private mutating func addCommon(_ other: IntervalSnapshot) {
        counters.merge(other.counters, uniquingKeysWith: +)
        if let theirs = other.counterNotices { counterNotices = (counterNotices ?? [:]).merging(theirs) { mine, _ in mine } }
        var folded = self.folded ?? [:]
        folded.merge(other.folded ?? [:], uniquingKeysWith: +)
        for (kind, count) in other.errors
        where CardinalityCap.add(kind, count, to: &errors, cap: CardinalityCap.errorKinds, combine: +) {
            folded[CardinalityCap.errorsFamily, default: 0] += count
        }
        for (room, fanout) in other.rooms
        where CardinalityCap.add(room, fanout, to: &rooms, cap: CardinalityCap.rooms, combine: { $0.adding($1) }) {
            folded[CardinalityCap.roomsFamily, default: 0] += fanout.sent + fanout.received
        }
        self.folded = folded.isEmpty ? nil : folded
        errorExamples = ErrorExamples.merge(errorExamples, other.errorExamples)
        loginFailures = LoginFailures.merge(loginFailures, other.loginFailures)
        forensics = FailureForensics.merge(forensics, other.forensics)
        for (name, histogram) in other.latency { latency[name, default: LatencyHistogram()].add(histogram) }
        for (name, histogram) in other.serviceLatency { serviceLatency[name, default: LatencyHistogram()].add(histogram) }
        loopLag.add(other.loopLag)
        ledger.add(other.ledger)
        nodes = NodeFigures.adding(nodes, other.nodes)
    }

    public static func == (lhs: IntervalSnapshot, rhs: IntervalSnapshot) -> Bool {
        lhs.start == rhs.start && lhs.end == rhs.end && lhs.counters == rhs.counters && lhs.gauges == rhs.gauges
            && lhs.latency == rhs.latency && lhs.serviceLatency == rhs.serviceLatency && lhs.errors == rhs.errors
            && lhs.loopLag == rhs.loopLag && lhs.health == rhs.health && lhs.ledger == rhs.ledger && lhs.rooms == rhs.rooms
            && lhs.folded == rhs.folded && lhs.nodes == rhs.nodes && lhs.errorExamples == rhs.errorExamples
            && lhs.loginFailures == rhs.loginFailures && lhs.forensics == rhs.forensics && lhs.counterNotices == rhs.counterNotices
    }
}

/// Group chat fan-out of one room: messages sent, receipts expected (each message × the occupants the
/// sender saw in the room when sending, itself included) and receipts that arrived.
public struct RoomFanout: Sendable, Equatable, Codable {
    public var sent: UInt64 = 0
    public var expected: UInt64 = 0
    public var received: UInt64 = 0

    public init(sent: UInt64 = 0, expected: UInt64 = 0, received: UInt64 = 0) {
        self.sent = sent
        self.expected = expected
        self.received = received
    }

    public func adding(_ other: RoomFanout) -> RoomFanout {
        RoomFanout(sent: sent + other.sent, expected: expected + other.expected, received: received + other.received)
    }

    /// Received receipts over expected ones (1 = every occupant got every message).
    public var completeness: Double { expected == 0 ? 1 : Double(received) / Double(expected) }
}

/// Counts from the message ledger.
public struct LedgerCounts: Sendable, Equatable, Codable {
    public var lost: UInt64 = 0
    public var duplicated: UInt64 = 0
    public var reordered: UInt64 = 0

    public init(lost: UInt64 = 0, duplicated: UInt64 = 0, reordered: UInt64 = 0) {
        self.lost = lost
        self.duplicated = duplicated
        self.reordered = reordered
    }

    public mutating func add(_ other: LedgerCounts) {
        lost += other.lost
        duplicated += other.duplicated
        reordered += other.reordered
    }
}

/// Stamped-message events recorded by the loops for the collector's `MessageLedger`. `sender` is
/// the sender's key: its generator key (`MessageStamp.generator`, 0 when none) in the high 32 bits,
/// its serial in the low ones (`MessageStamp.senderKey`).
public struct MessageEvents: Sendable, Equatable {
    public struct Sent: Sendable, Equatable {
        public let sender: UInt64
        public let sequence: UInt32
    }

    public struct Received: Sendable, Equatable {
        public let sender: UInt64
        public let sequence: UInt32
        public let receiver: UInt32
    }

    public var sent: [Sent] = []
    public var received: [Received] = []

    public init() {}

    public mutating func append(_ other: MessageEvents) {
        sent += other.sent
        received += other.received
    }
}

/// The generator's own health (measurement rule 7).
public struct GeneratorHealth: Sendable, Equatable, Codable {
    /// CPU used by the whole process in this interval, in percent of one core.
    public var cpuPercent: Double
    public var cpuSeconds: Double
    /// Resident memory when the interval ended, in bytes.
    public var rssBytes: UInt64
    /// The process's peak resident memory so far (Linux VmHWM), in bytes; nil in older results.
    /// Catches peaks between interval samples.
    public var peakRSSBytes: UInt64?
    public var openFileDescriptors: Int
    public var loopLagP99Milliseconds: Double
    public var loopLagMaxMilliseconds: Double
    public var cores: Int
    /// True when the generator, not the server, limited this interval: loop lag p99 > 50 ms or the
    /// process used more than 90 % of all cores.
    public var saturated: Bool

    enum CodingKeys: String, CodingKey {
        case cpuPercent = "cpu_percent"
        case cpuSeconds = "cpu_seconds"
        case rssBytes = "rss_bytes"
        case peakRSSBytes = "peak_rss_bytes"
        case openFileDescriptors = "open_fds"
        case loopLagP99Milliseconds = "loop_lag_p99_ms"
        case loopLagMaxMilliseconds = "loop_lag_max_ms"
        case cores, saturated
    }

    public init(
        cpuPercent: Double, cpuSeconds: Double, rssBytes: UInt64, openFileDescriptors: Int,
        loopLagP99Milliseconds: Double, loopLagMaxMilliseconds: Double, cores: Int
    ) {
        self.cpuPercent = cpuPercent
        self.cpuSeconds = cpuSeconds
        self.rssBytes = rssBytes
        self.openFileDescriptors = openFileDescriptors
        self.loopLagP99Milliseconds = loopLagP99Milliseconds
        self.loopLagMaxMilliseconds = loopLagMaxMilliseconds
        self.cores = cores
        saturated = Self.isSaturated(cpuPercent: cpuPercent, cores: cores, lagP99: loopLagP99Milliseconds)
    }

    public static let lagLimitMilliseconds = 50.0
    public static let cpuLimitFraction = 0.9

    static func isSaturated(cpuPercent: Double, cores: Int, lagP99: Double) -> Bool {
        lagP99 > lagLimitMilliseconds || cpuPercent > cpuLimitFraction * 100 * Double(max(cores, 1))
    }

    /// Two generators in the same interval: resources add, lag takes the worst.
    static func combine(_ a: GeneratorHealth?, _ b: GeneratorHealth?) -> GeneratorHealth? {
        guard let a else { return b }
        guard let b else { return a }
        var result = GeneratorHealth(
            cpuPercent: a.cpuPercent + b.cpuPercent, cpuSeconds: a.cpuSeconds + b.cpuSeconds,
            rssBytes: a.rssBytes + b.rssBytes, openFileDescriptors: a.openFileDescriptors + b.openFileDescriptors,
            loopLagP99Milliseconds: max(a.loopLagP99Milliseconds, b.loopLagP99Milliseconds),
            loopLagMaxMilliseconds: max(a.loopLagMaxMilliseconds, b.loopLagMaxMilliseconds),
            cores: a.cores + b.cores)
        if a.peakRSSBytes != nil || b.peakRSSBytes != nil {
            result.peakRSSBytes = (a.peakRSSBytes ?? a.rssBytes) + (b.peakRSSBytes ?? b.rssBytes)
        }
        result.saturated = a.saturated || b.saturated
        return result
    }

    /// Over time: CPU seconds add, peaks are kept, saturation sticks.
    static func accumulate(_ total: GeneratorHealth?, _ later: GeneratorHealth?) -> GeneratorHealth? {
        guard let total else { return later }
        guard let later else { return total }
        var result = later
        result.cpuSeconds = total.cpuSeconds + later.cpuSeconds
        result.cpuPercent = max(total.cpuPercent, later.cpuPercent)
        result.rssBytes = max(total.rssBytes, later.rssBytes)
        if total.peakRSSBytes != nil || later.peakRSSBytes != nil {
            result.peakRSSBytes = max(total.peakRSSBytes ?? 0, later.peakRSSBytes ?? 0)
        }
        result.openFileDescriptors = max(total.openFileDescriptors, later.openFileDescriptors)
        result.loopLagP99Milliseconds = max(total.loopLagP99Milliseconds, later.loopLagP99Milliseconds)
        result.loopLagMaxMilliseconds = max(total.loopLagMaxMilliseconds, later.loopLagMaxMilliseconds)
        result.saturated = total.saturated || later.saturated
        return result
    }
}

extension IntervalSnapshot {
    /// Every login that succeeded in the interval: first logins, logins again after a drop, and
    /// resumed streams (the `login` metric counts all three), so a reconnect storm shows in logins/s.
    public var successfulLogins: UInt64 {
        counter(.sessionsLoggedIn) + counter(.sessionsReconnected) + counter(.sessionsResumed)
    }
}
