/// Records one event loop's measurements for the current interval, without locks: it lives on the
/// loop, and the collector asks the loop for `takeSnapshot` at each interval boundary.
///
/// Latency histograms are created lazily per metric and reset (not reallocated) at each snapshot.
/// Not `Sendable` by design; what crosses loops is the `IntervalSnapshot` it returns.
public struct MetricsRecorder {
    private let names: [String]
    private var corrected: [LatencyHistogram?]
    private var service: [LatencyHistogram?]
    private var counters: [UInt64]
    /// The registered counters (`MetricRegistry.registerCounter`), indexed after the fixed ones.
    private let registeredCounters: [(name: String, notice: CounterNotice?)]
    private var errors: [String: UInt64] = [:]
    private var gauges: [String: Int64] = [:]
    private var loopLag = LatencyHistogram()
    private var events = MessageEvents()
    private var rooms: [String: RoomFanout] = [:]
    /// Occurrences folded into `-other` keys per label family (`CardinalityCap`).
    private var folded: [String: UInt64] = [:]
    /// Per-node figures (nil: the run has one endpoint).
    private var nodes: NodeRecorder?
    /// Example server texts of this interval for kinds this loop had no example for yet.
    private var errorExamples: [String: String] = [:]
    /// Kinds this loop has reported an example for, over the whole run (at most the error-kind cap).
    private var exampleKinds: Set<String> = []
    /// Failed logins of this interval by phase and kind.
    private var loginFailures: [String: [String: UInt64]] = [:]
    /// Failed sessions this loop kept for forensics over the whole run, per kind (decides
    /// `wantsForensics`: at most `FailureForensics.maxKinds` keys), and those of this interval.
    private var forensicsKept: [String: Int] = [:]
    private var forensics = FailureForensics()

    public init(registry: MetricRegistry) {
        names = registry.names
        nodes = registry.nodeLabels.isEmpty ? nil : NodeRecorder(labels: registry.nodeLabels, metricNames: registry.names)
        corrected = Array(repeating: nil, count: registry.count)
        service = Array(repeating: nil, count: registry.count)
        registeredCounters = registry.registeredCounters
        counters = Array(repeating: 0, count: Counter.allCases.count + registry.registeredCounters.count)
    }

    /// Records one latency: `correctedNanoseconds` from the intended start, `serviceNanoseconds` from
    /// the actual start.
    public mutating func recordLatency(_ id: MetricID, correctedNanoseconds: UInt64, serviceNanoseconds: UInt64) {
        if corrected[id.index] == nil {
            corrected[id.index] = LatencyHistogram()
            service[id.index] = LatencyHistogram()
        }
        corrected[id.index]!.record(nanoseconds: correctedNanoseconds)
        service[id.index]!.record(nanoseconds: serviceNanoseconds)
    }

    /// Records one latency, and also for `node` when the run has several (`NodeFigures`): its
    /// service latency there only when `keepServiceForNode` (a login phase's equals its corrected one).
    public mutating func recordLatency(
        _ id: MetricID, correctedNanoseconds: UInt64, serviceNanoseconds: UInt64, node: ServerNode?,
        keepServiceForNode: Bool = true
    ) {
        recordLatency(id, correctedNanoseconds: correctedNanoseconds, serviceNanoseconds: serviceNanoseconds)
        if let node {
            nodes?.recordLatency(
                node: node.index, metric: id, correctedNanoseconds: correctedNanoseconds,
                serviceNanoseconds: keepServiceForNode ? serviceNanoseconds : nil)
        }
    }

    /// Counts one error, and also for `node` when the run has several.
    public mutating func recordError(kind: String, node: ServerNode?) {
        recordError(kind: kind)
        if let node { nodes?.recordError(node: node.index, kind: kind) }
    }

    /// A one-to-one message sent from a session on node `senderLabel` (from its stamp) arrived at a
    /// session on `receiver` after `nanoseconds` (send to receipt): one sample in the node matrix.
    /// Labels that are not this run's nodes are not counted.
    public mutating func recordNodeMessage(senderLabel: String, receiver: ServerNode, nanoseconds: UInt64) {
        nodes?.recordMessage(senderLabel: senderLabel, receiver: receiver.index, nanoseconds: nanoseconds)
    }

    public mutating func increment(_ counter: Counter, by amount: UInt64 = 1) {
        counters[counter.rawValue] &+= amount
    }

    /// Adds `amount` to a counter a feature registered.
    public mutating func increment(_ counter: CounterID, by amount: UInt64 = 1) {
        counters[counter.index] &+= amount
    }

    /// A counter's value in the current interval.
    public func count(_ counter: Counter) -> UInt64 { counters[counter.rawValue] }

    /// A registered counter's value in the current interval.
    public func count(_ counter: CounterID) -> UInt64 { counters[counter.index] }

    /// Counts one error; beyond `CardinalityCap.errorKinds` distinct kinds a new kind folds into
    /// its `-other` key.
    public mutating func recordError(kind: String) {
        if CardinalityCap.add(kind, 1, to: &errors, cap: CardinalityCap.errorKinds, combine: +) {
            folded[CardinalityCap.errorsFamily, default: 0] += 1
        }
    }

    /// Keeps the server's text as the example of `kind` when this loop has none yet (`ErrorExamples`);
    /// `text` is evaluated only then, so the cost per error is a set lookup.
    public mutating func recordErrorExample(kind: String, text: @autoclosure () -> String?) {
        guard exampleKinds.count < CardinalityCap.errorKinds, !exampleKinds.contains(kind) else { return }
        guard let raw = text(), let clean = ErrorExamples.sanitized(raw) else { return }
        exampleKinds.insert(kind)
        ErrorExamples.add(clean, kind: kind, to: &errorExamples)
    }

    /// Counts one login that failed in `phase` (a `LoginPhase` name) with error `kind`; kinds per phase
    /// are bounded like error kinds (`CardinalityCap`).
    public mutating func recordLoginFailure(phase: String, kind: String) {
        LoginFailures.add(phase: phase, kind: kind, count: 1, to: &loginFailures)
    }

    /// True when this loop still keeps forensics for a session failing with `kind`: it is among the
    /// first `FailureForensics.sessionsPerKind` of its kind here (and the kind among the first kinds).
    public func wantsForensics(kind: String) -> Bool {
        if let kept = forensicsKept[kind] { return kept < FailureForensics.sessionsPerKind }
        return forensicsKept.count < FailureForensics.maxKinds
    }

    /// Keeps `session`'s forensics when `wantsForensics(kind:)`; they leave with the interval's snapshot.
    public mutating func recordForensics(_ session: FailedSession) {
        guard wantsForensics(kind: session.kind) else { return }
        forensicsKept[session.kind, default: 0] += 1
        forensics.offer(session)
    }

    /// The room's key, folded beyond `CardinalityCap.rooms` distinct rooms.
    private mutating func roomKey(_ room: String) -> String {
        let (key, wasFolded) = CardinalityCap.key(
            for: room, present: rooms[room] != nil, count: rooms.count,
            cap: CardinalityCap.rooms)
        if wasFolded { folded[CardinalityCap.roomsFamily, default: 0] += 1 }
        return key
    }

    public mutating func setGauge(_ name: String, _ value: Int64) {
        gauges[name] = value
    }

    public mutating func recordLoopLag(nanoseconds: UInt64) {
        loopLag.record(nanoseconds: nanoseconds)
    }

    /// `sender`: the stamp's `senderKey` (generator key and serial).
    public mutating func messageSent(sender: UInt64, sequence: UInt32) {
        counters[Counter.messagesSent.rawValue] &+= 1
        events.sent.append(.init(sender: sender, sequence: sequence))
    }

    public mutating func messageReceived(sender: UInt64, sequence: UInt32, receiver: UInt32) {
        counters[Counter.messagesReceived.rawValue] &+= 1
        events.received.append(.init(sender: sender, sequence: sequence, receiver: receiver))
    }

    /// A groupchat message sent to `room` whose sender saw `occupants` occupants (itself included).
    public mutating func groupchatSent(room: String, occupants: Int) {
        counters[Counter.groupchatSent.rawValue] &+= 1
        let room = roomKey(room)
        rooms[room, default: RoomFanout()].sent += 1
        rooms[room, default: RoomFanout()].expected += UInt64(max(occupants, 0))
    }

    public mutating func groupchatReceived(room: String) {
        counters[Counter.groupchatReceived.rawValue] &+= 1
        rooms[roomKey(room), default: RoomFanout()].received += 1
    }

    /// The interval's data; the recorder starts the next interval empty (gauges persist).
    public mutating func takeSnapshot(start: Double, end: Double) -> IntervalSnapshot {
        var snapshot = IntervalSnapshot(start: start, end: end)
        for counter in Counter.allCases where counters[counter.rawValue] != 0 {
            snapshot.counters[counter.name] = counters[counter.rawValue]
        }
        for (offset, registered) in registeredCounters.enumerated() {
            let value = counters[Counter.allCases.count + offset]
            guard value != 0 else { continue }
            snapshot.counters[registered.name] = value
            if let notice = registered.notice { snapshot.counterNotices = (snapshot.counterNotices ?? [:]).merging([registered.name: notice]) { $1 } }
        }
        for index in names.indices {
            if let histogram = corrected[index], !histogram.isEmpty {
                snapshot.latency[names[index]] = histogram
                snapshot.serviceLatency[names[index]] = service[index]!
                corrected[index]!.reset()
                service[index]!.reset()
            }
        }
        snapshot.errors = errors
        snapshot.gauges = gauges
        snapshot.loopLag = loopLag
        snapshot.messageEvents = events
        snapshot.rooms = rooms
        snapshot.folded = folded.isEmpty ? nil : folded
        snapshot.nodes = nodes?.takeFigures()
        snapshot.errorExamples = errorExamples.isEmpty ? nil : errorExamples
        errorExamples = [:]
        snapshot.loginFailures = loginFailures.isEmpty ? nil : loginFailures
        loginFailures = [:]
        snapshot.forensics = forensics.isEmpty ? nil : forensics
        forensics = FailureForensics()
        rooms = [:]
        folded = [:]
        counters = Array(repeating: 0, count: counters.count)
        errors = [:]
        loopLag.reset()
        events = MessageEvents()
        return snapshot
    }
}
