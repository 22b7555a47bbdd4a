import LoadProfile
import LoadResults

/// A profile compiled for execution: a flat, immutable list of instructions shared by every session
/// that runs the profile, so a session's whole progress is one program counter plus a small loop stack.
///
/// Nested `repeat` and `choose` blocks become jumps; each step's metric name is resolved to a dense
/// `MetricID` once, here, so the hot path never looks a name up.
struct SessionScript: Sendable {
    /// One executable step.
    enum Operation: Sendable {
        case login(LoginOptions)
        case rosterGet
        case rosterSet(RosterAction)
        case presence(PresenceAction)
        case message(MessageAction)
        case muc(MUCAction)
        case iq(IQAction)
        case wait(WaitCondition)
        case think(ThinkTime)
        case stayOnline
        case logout
        /// Enter a loop whose body runs from the next instruction to `end` (exclusive).
        case loopStart(LoopCount, end: Int)
        /// Go back to the matching `loopStart` at `start`.
        case loopEnd(start: Int)
        /// Jump to one of the branches, chosen by weight; `cumulativeWeights` ends with the total.
        case choose(cumulativeWeights: [Double], targets: [Int])
        case jump(Int)
    }

    /// An operation with its metric, error policy and timeout.
    struct Instruction: Sendable {
        var operation: Operation
        var name: String
        var metric: MetricID
        var continueOnError: Bool
        var timeout: Duration
    }

    let profileName: String
    let instructions: [Instruction]
    /// Run the program again from the start after it ends, until the phase ends (`repeat: forever`).
    let repeatsForever: Bool

    /// How long connect + login may take: the login step's timeout.
    var loginTimeout: Duration {
        for instruction in instructions {
            if case .login = instruction.operation { return instruction.timeout }
        }
        return .seconds(30)
    }

    /// Compiles `profile`, registering every step's metric in `registry`.
    init(profile: Profile, registry: inout MetricRegistry) {
        var compiler = Compiler(defaultTimeout: profile.stepTimeout, registry: registry)
        compiler.emit(profile.steps)
        registry = compiler.registry
        profileName = profile.name
        instructions = compiler.instructions
        repeatsForever = profile.repeatMode == .forever
    }

    private struct Compiler {
        let defaultTimeout: Duration
        var registry: MetricRegistry
        var instructions: [Instruction] = []

        mutating func emit(_ steps: [Step]) {
            for step in steps { emit(step) }
        }

        private mutating func append(_ operation: Operation, for step: Step) {
            instructions.append(Instruction(operation: operation, name: step.name,
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
            if let interval { append(.think(interval), for: step) }
            append(operation(), for: step)
            append(.loopEnd(start: start), for: step)
            instructions[start].operation = .loopStart(.times(count - 1), end: instructions.count)
        }

        private mutating func emit(_ step: Step) {
            switch step.action {
            case .login(let options): append(.login(options), for: step)
            case .roster(let action):
                if case .get = action { append(.rosterGet, for: step) } else { append(.rosterSet(action), for: step) }
            case .presence(let action): append(.presence(action), for: step)
            case .message(let action):
                emitRepeated(count: action.count, interval: action.interval, step: step) {
                    var single = action
                    single.count = 1
                    return .message(single)
                }
            case .muc(.send(let body, let count, let interval)):
                emitRepeated(count: count, interval: interval, step: step) { .muc(.send(body: body, count: 1, interval: nil)) }
            case .muc(let action): append(.muc(action), for: step)
            case .iq(let action): append(.iq(action), for: step)
            case .wait(let condition): append(.wait(condition), for: step)
            case .think(let think): append(.think(think), for: step)
            case .stayOnline: append(.stayOnline, for: step)
            case .logout: append(.logout, for: step)
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
            }
        }
    }
}
