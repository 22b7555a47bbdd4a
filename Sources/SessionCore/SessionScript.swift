import LoadProfile
import LoadResults
import XMPPCore

/// A profile compiled for execution: a flat, immutable list of instructions shared by every session
/// that runs the profile (one instance per profile: sessions hold a reference, not a copy), so a
/// session's whole progress is one program counter plus a small loop stack.
///
/// Everything a session needs from its profile is resolved here, once per run, not per session:
/// nested `repeat` and `choose` blocks become jumps; each step's metric name becomes a dense
/// `MetricID`; the login options are merged with the command line's overrides (`login`); the login
/// timeout is found; and the profile keeps *its own* `variables` (in a weighted mix, each profile's
/// sessions see their profile's values, never another profile's).
public final class SessionScript: Sendable {
    /// How this script's sessions log in: the profile's login step merged with the run's overrides.
    public struct Login: Sendable, Equatable {
        public var tls: TLSMode
        /// Forced mechanism; nil: the strongest offered.
        public var mechanism: SASLMechanism?
        public var register: Bool
        public var resource: Template
        /// The login protocol: SASL2 where offered (`auto`), never (`classic`) or always (`sasl2`).
        public var mode: LoginMode
        /// Ask for a FAST token (XEP-0484) where SASL2 offers FAST, and log in with it on the
        /// session's next connections.
        public var fast: Bool
        /// Enable message carbons inline with Bind2 where offered: the profile has a `carbons`
        /// (enable) step, which then completes without a request.
        public var carbons: Bool

        public init(
            tls: TLSMode = .startTLS, mechanism: SASLMechanism? = nil, register: Bool = false,
            resource: Template = Template(literal: "xmppload"), mode: LoginMode = .auto, fast: Bool = true, carbons: Bool = false
        ) {
            self.tls = tls
            self.mechanism = mechanism
            self.register = register
            self.resource = resource
            self.mode = mode
            self.fast = fast
            self.carbons = carbons
        }

        /// Whether this login can use the connection's channel binding (`-PLUS`, a bound FAST
        /// mechanism): TLS is used, and either the mechanism is chosen from the offer (or forced to a
        /// `-PLUS` one) or SASL2 may carry FAST. Only then does the run read channel-binding data.
        public var usesChannelBinding: Bool {
            tls != .none && (mechanism?.usesChannelBinding ?? true || (mode != .classic && fast))
        }
    }

    /// Command-line choices that win over every profile's (`--tls`, `--sasl`).
    public struct Overrides: Sendable, Equatable {
        public var tls: TLSMode?
        public var mechanism: SASLMechanism?
        /// `--reconnect N`: every profile reconnects up to N times in a row (0: never), with the
        /// profile's back-off delays (or the defaults).
        public var reconnectAttempts: Int?
        /// `--login auto|classic|sasl2`: the login protocol of every profile.
        public var mode: LoginMode?

        public init(tls: TLSMode? = nil, mechanism: SASLMechanism? = nil, reconnectAttempts: Int? = nil, mode: LoginMode? = nil) {
            self.tls = tls
            self.mechanism = mechanism
            self.reconnectAttempts = reconnectAttempts
            self.mode = mode
        }
    }

    /// One executable instruction: a leaf step as the profile says it, or control flow.
    public enum Operation: Sendable {
        /// A step the session performs (never `.loop` or `.choose`, which compile to control flow; a
        /// message or MUC send with a count compiles to single sends in a loop).
        case step(StepAction)
        /// Enter a loop whose body runs from the next instruction to `end` (exclusive).
        case loopStart(LoopCount, end: Int)
        /// Go back to the matching `loopStart` at `start`.
        case loopEnd(start: Int)
        /// Jump to one of the branches, chosen by weight; `cumulativeWeights` ends with the total.
        case choose(cumulativeWeights: [Double], targets: [Int])
        case jump(Int)
    }

    /// An operation with its metric, error policy and timeout.
    public struct Instruction: Sendable {
        public var operation: Operation
        public var name: String
        public var metric: MetricID
        public var continueOnError: Bool
        public var timeout: Duration
    }

    public let profileName: String
    public let instructions: [Instruction]
    /// Run the program again from the start after it ends, until the phase ends (`repeat: forever`).
    public let repeatsForever: Bool
    /// How this script's sessions log in.
    public let login: Login
    /// Where a session's program starts once it logged in (again): the instruction after `login`.
    public let firstInstructionAfterLogin: Int
    /// How long connect + login may take: the login step's timeout.
    public let loginTimeout: Duration
    /// This profile's `variables:` (its own, not merged with other profiles of a mix).
    public let variables: [String: String]
    /// What a logged-in session does when its connection drops.
    public let reconnect: ReconnectPolicy
    /// What a logged-in session sends on its own to keep the connection alive.
    public let keepAlive: KeepAlive?
    /// XEP-0198 acks and resumption, when the profile asks for it.
    public let streamManagement: StreamManagement?
    /// XEP-0115 capabilities the session advertises in its available presence (and answers disco#info
    /// with): what its feature steps need (`RequestFeature.capsFeatures`: `<node>+notify` for every
    /// PEP node the profile publishes to, so the server delivers the notifications `pep.notify` times,
    /// XEP-0163 §4); nil when none.
    public let entityCaps: EntityCaps?
    /// The counters of the request features this profile uses, by registry index
    /// (`SessionFeatures.requestFeatures`; empty for a feature the profile does not use).
    let featureCounters: [[CounterID]]
    /// True when the profile has at least one feature step.
    let usesRequestFeatures: Bool
    /// The registry indices of the request features the profile uses.
    private let usedFeatures: Set<Int>

    /// Whether the profile uses the request feature at registry index `index`.
    func usesFeature(_ index: Int) -> Bool { usedFeatures.contains(index) }

    /// Compiles `profile`, registering every step's metric in `registry`; `overrides` are the command
    /// line's login choices.
    public init(profile: Profile, registry: inout MetricRegistry, overrides: Overrides = Overrides()) {
        var compiler = Compiler(defaultTimeout: profile.stepTimeout, registry: registry)
        compiler.emit(profile.steps)
        registry = compiler.registry
        profileName = profile.name
        instructions = compiler.instructions
        repeatsForever = profile.repeatMode == .forever
        variables = profile.variables
        var reconnect = profile.reconnect
        if let attempts = overrides.reconnectAttempts { reconnect.attempts = attempts }
        self.reconnect = reconnect
        keepAlive = profile.keepAlive
        streamManagement = profile.streamManagement
        var caps: [String] = []
        var counters = Array(repeating: [CounterID](), count: SessionFeatures.requestFeatures.count)
        var used = Set<Int>()
        var enablesCarbons = false
        for instruction in compiler.instructions {
            guard case .step(.feature(let step)) = instruction.operation, let index = SessionFeatures.index(named: step.feature) else { continue }
            if step.feature == CarbonsFeature.name && step.operation != "disable" { enablesCarbons = true }
            let feature = SessionFeatures.requestFeatures[index]
            for name in feature.capsFeatures(for: step) where !caps.contains(name) { caps.append(name) }
            if used.insert(index).inserted {
                counters[index] = feature.counters.map { registry.registerCounter($0.name, notice: $0.notice) }
            }
        }
        entityCaps = caps.isEmpty ? nil : EntityCaps(features: caps)
        featureCounters = counters
        usesRequestFeatures = !used.isEmpty
        usedFeatures = used
        var options = profile.login
        var timeout = Duration.seconds(30)
        var afterLogin = 0
        for (index, instruction) in compiler.instructions.enumerated() {
            if case .step(.login(let stepOptions)) = instruction.operation {
                options = stepOptions
                timeout = instruction.timeout
                afterLogin = index + 1
                break
            }
        }
        loginTimeout = timeout
        firstInstructionAfterLogin = afterLogin
        // A forced mechanism (`--sasl`, `login: {sasl: …}`) is every login's: no FAST token unless
        // the profile asks for one.
        let mechanism = overrides.mechanism ?? options.mechanism
        login = Login(
            tls: overrides.tls ?? options.tls ?? .startTLS, mechanism: mechanism,
            register: options.register, resource: options.resource,
            mode: overrides.mode ?? options.mode ?? .auto, fast: options.fast ?? (mechanism == nil), carbons: enablesCarbons)
    }

    private struct Compiler {
        let defaultTimeout: Duration
        var registry: MetricRegistry
        var instructions: [Instruction] = []

        mutating func emit(_ steps: [Step]) {
            for step in steps { emit(step) }
        }

        private mutating func append(_ operation: Operation, for step: Step) {
            instructions.append(
                Instruction(
                    operation: operation, name: step.name,
                    metric: registry.register(step.name),
                    continueOnError: step.onError == .continue,
                    timeout: step.timeout ?? defaultTimeout))
        }

        /// `count` sends with `interval` between them: send, then (count − 1) × [think, send].
        private mutating func emitRepeated(count: Int, interval: ThinkTime?, step: Step, _ operation: () -> Operation) {
            append(operation(), for: step)
            guard count > 1 else { return }
            let start = instructions.count
            append(.loopStart(.times(count - 1), end: -1), for: step)
            if let interval { append(.step(.think(interval)), for: step) }
            append(operation(), for: step)
            append(.loopEnd(start: start), for: step)
            instructions[start].operation = .loopStart(.times(count - 1), end: instructions.count)
        }

        private mutating func emit(_ step: Step) {
            switch step.action {
            case .message(let action):
                emitRepeated(count: action.count, interval: action.interval, step: step) {
                    var single = action
                    single.count = 1
                    return .step(.message(single))
                }
            case .muc(.send(let body, let count, let interval)):
                emitRepeated(count: count, interval: interval, step: step) { .step(.muc(.send(body: body, count: 1, interval: nil))) }
            case .loop(let count, let body):
                let start = instructions.count
                append(.loopStart(count, end: -1), for: step)
                emit(body)
                append(.loopEnd(start: start), for: step)
                instructions[start].operation = .loopStart(count, end: instructions.count)
            case .choose(let branches):
                let chooseIndex = instructions.count
                append(.jump(-1), for: step)
                var targets: [Int] = []
                var jumpsToEnd: [Int] = []
                var cumulative: [Double] = []
                var total = 0.0
                for branch in branches {
                    total += branch.weight
                    cumulative.append(total)
                    targets.append(instructions.count)
                    emit(branch.steps)
                    jumpsToEnd.append(instructions.count)
                    append(.jump(-1), for: step)
                }
                let end = instructions.count
                for index in jumpsToEnd { instructions[index].operation = .jump(end) }
                instructions[chooseIndex].operation = .choose(cumulativeWeights: cumulative, targets: targets)
            default:
                append(.step(step.action), for: step)
            }
        }
    }
}
