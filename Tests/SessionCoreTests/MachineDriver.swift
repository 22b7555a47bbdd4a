import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// A `SessionHost` made of plain values — what a session asks of its event loop — plus where the
/// driver applies the effects the machine returns (recorder, directory, gauges, facts), as the
/// engine's `VirtualUser` does.
final class TestHost: SessionHost {
    var recorder: MetricsRecorder
    let keyCache = SCRAMKeyCache()
    var isStopping = false
    /// Slots marked online (available presence seen).
    var online: Set<Int> = []
    var released: [Int] = []
    var gauges = SessionGauges()
    var connecting: Int { gauges.connecting }
    var onlineGauge: Int { gauges.online }
    var facts = ServerFacts()
    /// XEP-0202 answers the probing session reported: (sent, received, utc).
    var timeAnswers: [(sent: SessionInstant, received: SessionInstant, utc: String)] = []
    /// This generator's clock for stamps (nil: a run of one generator).
    var stampClock: MessageStamp.Clock?

    init(registry: MetricRegistry) {
        recorder = MetricsRecorder(registry: registry)
    }

    func fillerBody(size: Int) -> String { String(repeating: "x", count: size) }

    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int? {
        online.subtracting([slot]).sorted().first
    }

    /// Applies an effect the machine of the user in `slot` returned; false for I/O and timer actions.
    func apply(_ action: SessionAction, slot: Int) -> Bool {
        switch action {
        case .record(let effect): effect.apply(to: &recorder)
        case .setOnline(let isOnline): if isOnline { online.insert(slot) } else { online.remove(slot) }
        case .releaseAccount: released.append(slot)
        case .learned(let more): facts.merge(more)
        case .clockSample(let sent, let received, let utc): timeAnswers.append((sent, received, utc))
        case .stageChanged(let old, let new): gauges.moved(from: old, to: new)
        default: return false
        }
        return true
    }
}

/// Drives one `SessionMachine` on virtual time: feeds events, keeps the armed timeout and wake-up, and
/// fires them in order when time advances — no real time passes.
struct MachineDriver {
    var machine: SessionMachine
    let host: TestHost
    var now = SessionInstant.zero
    var timeoutAt: SessionInstant?
    var wakeAt: SessionInstant?
    /// Every action except timer bookkeeping and effects, in order.
    var actions: [SessionAction] = []
    /// Every effect (measurements, directory, gauges, facts), in order; the driver also applies them
    /// to `host`.
    var effects: [SessionAction] = []
    private let parser = StanzaParser()
    private let header: StreamHeader

    /// A machine for the first profile of `yaml` (or the profile at `index` of a mix), the user in
    /// `slot` of `accounts` (1…10; `runAccounts`: the whole run's, when this generator has a block).
    /// `nodes`: the run's server node labels (several: per-node figures), `node` this user's.
    init(
        profile yaml: String, index: Int = 0, slot: Int = 0, seed: UInt64 = 1, nodes: [String] = [], node: ServerNode? = nil,
        accounts: ClosedRange<Int> = 1...10, runAccounts: ClosedRange<Int>? = nil, generatorKey: UInt32? = nil,
        churnResumeShare: Double = 1
    ) throws {
        try self.init(
            definition: try ProfileLoader.load(yaml: yaml, file: "test.yaml"), index: index, slot: slot, seed: seed,
            nodes: nodes, node: node, accounts: accounts, runAccounts: runAccounts, generatorKey: generatorKey,
            churnResumeShare: churnResumeShare)
    }

    init(
        definition: RunDefinition, index: Int = 0, slot: Int = 0, seed: UInt64 = 1, nodes: [String] = [],
        node: ServerNode? = nil, accounts: ClosedRange<Int> = 1...10, runAccounts: ClosedRange<Int>? = nil,
        generatorKey: UInt32? = nil, churnResumeShare: Double = 1
    ) throws {
        var registry = MetricRegistry()
        registry.nodeLabels = nodes
        let metrics = FixedMetrics(registry: &registry)
        let scripts = definition.profiles.map { SessionScript(profile: $0.profile, registry: &registry) }
        host = TestHost(registry: registry)
        let settings = SessionSettings(
            domain: "load.test", accounts: accounts, runAccounts: runAccounts, password: "secret", runID: "run-1",
            tlsAvailable: false, metrics: metrics, generatorKey: generatorKey, churnResumeShare: churnResumeShare)
        let number = accounts.lowerBound + slot
        let identity = SessionIdentity(
            serial: slot, slot: slot, accountNumber: number, username: "user\(number)",
            bareJID: "user\(number)@load.test", node: node)
        machine = SessionMachine(
            identity: identity, script: scripts[index], settings: settings, host: host,
            generator: SeededGenerator(seed: seed, stream: UInt64(slot)), intendedStart: .zero)
        header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
    }

    /// When set, events go through `handle(_:now:into:)` with this buffer, emptied and kept between
    /// events, as `VirtualUser` does with its loop's spare buffers.
    var recycledActions: [SessionAction]?

    mutating func send(_ event: SessionEvent) {
        if var buffer = recycledActions.take() {
            machine.handle(event, now: now, into: &buffer)
            for action in buffer { note(action) }
            buffer.removeAll(keepingCapacity: true)
            recycledActions = buffer
        } else {
            for action in machine.handle(event, now: now) { note(action) }
        }
    }

    private mutating func note(_ action: SessionAction) {
        if host.apply(action, slot: machine.identity.slot) { return effects.append(action) }
        switch action {
        case .armTimeout(let at): timeoutAt = at
        case .cancelTimeout: timeoutAt = nil
        case .armWake(let at): wakeAt = at
        case .cancelWake: wakeAt = nil
        default: actions.append(action)
        }
    }

    /// The server sends this element.
    mutating func receive(_ xml: String) throws {
        send(.received(try parser.parseElement(Array(xml.utf8), in: header)))
    }

    /// Moves the clock to `instant`, firing every armed timer that comes due on the way, in order.
    mutating func advance(to instant: SessionInstant) {
        while true {
            let due = [timeoutAt, wakeAt].compactMap { $0 }.filter { $0 <= instant }.min()
            guard let due else { break }
            now = max(now, due)
            if wakeAt == due {
                wakeAt = nil
                send(.wakeFired)
            } else {
                timeoutAt = nil
                send(.timeoutFired)
            }
        }
        now = max(now, instant)
    }

    mutating func advance(by duration: Duration) { advance(to: now + duration) }

    /// Elements sent since the last call.
    mutating func sent() -> [XMLElement] {
        defer {
            actions.removeAll {
                switch $0 {
                case .send, .sendMessage: return true
                default: return false
                }
            }
        }
        return actions.compactMap {
            switch $0 {
            case .send(let element): return element
            case .sendMessage(let message): return message.element
            default: return nil
            }
        }
    }

    /// Starts (unless `startedAlready`: a reconnect asked for its connection), connects and logs in
    /// over plain PLAIN (no TLS), as a Prosody would answer.
    /// `features` are extra stream features after authentication (e.g. `<csi xmlns='urn:xmpp:csi:0'/>`).
    mutating func logIn(startedAlready: Bool = false, features: String = "") throws {
        if !startedAlready { send(.start) }
        send(.connected)
        try receive(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        try receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        try receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/>\(features)</stream:features>")
        try receive(
            "<iq type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>\(machine.identity.bareJID)/r1</jid></bind></iq>")
    }

    var ended: Bool { actions.contains { if case .ended = $0 { return true } else { return false } } }
}

extension SessionAction {
    /// A connect to the session's first choice (endpoint 0, no fallback, no resumption location).
    static let connectFirst = SessionAction.connect(ConnectTarget(endpoint: 0))
}
