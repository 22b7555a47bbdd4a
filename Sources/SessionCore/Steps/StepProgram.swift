// The step interpreter's position: program counter, open loops, and when the current step was due.
import LoadProfile

/// Where a session is in its compiled profile (`SessionScript.instructions`) and when the current step
/// was due and began. `next(in:now:using:)` walks the control flow (loops, choices, jumps) to the next
/// step; the machine starts it.
///
/// Timing: a step counts from `stepIntended` (the end of the previous step plus think time; its
/// corrected latency) and from `stepStart` (when it actually started; its service latency).
struct StepProgram {
    /// The instruction the session is at.
    private(set) var pc = 0
    private var loops: [LoopFrame] = []
    /// When the current step was due.
    private(set) var stepIntended: SessionInstant
    /// When the current step began.
    var stepStart: SessionInstant

    private struct LoopFrame {
        let start: Int
        var remaining: Int?
        let until: SessionInstant?
    }

    init(start: SessionInstant) {
        stepIntended = start
        stepStart = start
    }

    /// Moves to instruction `index`; the step there is due at `intended`.
    mutating func advance(to index: Int, intended: SessionInstant) {
        pc = index
        stepIntended = intended
    }

    /// The step after the current one, due at `intended`.
    mutating func advanceToNext(intended: SessionInstant) { advance(to: pc + 1, intended: intended) }

    /// Forgets the open loops (the connection's program state is gone; it starts again after the login).
    mutating func forgetLoops() { loops = [] }

    /// What comes next.
    enum Next {
        /// Start this step (at `pc`).
        case step(StepAction, SessionScript.Instruction)
        /// Log out: a `logout` step, or the end of the program.
        case logout
    }

    /// Walks control flow from `pc` to the next step to start (loops count down or run out at `now`;
    /// `choose` draws from `generator`).
    mutating func next(in script: SessionScript, now: SessionInstant, using generator: inout SeededGenerator) -> Next {
        while pc < script.instructions.count {
            let instruction = script.instructions[pc]
            switch instruction.operation {
            case .loopStart(let count, let end):
                switch count {
                case .times(let n) where n <= 0:
                    pc = end
                case .times(let n):
                    loops.append(LoopFrame(start: pc, remaining: n, until: nil))
                    pc += 1
                case .duration(let duration):
                    loops.append(LoopFrame(start: pc, remaining: nil, until: now + duration))
                    pc += 1
                case .forever:
                    loops.append(LoopFrame(start: pc, remaining: nil, until: nil))
                    pc += 1
                }
            case .loopEnd(let start):
                guard var frame = loops.popLast(), frame.start == start else {
                    pc += 1
                    continue
                }
                var again = true
                if let remaining = frame.remaining {
                    frame.remaining = remaining - 1
                    again = remaining - 1 > 0
                }
                if let until = frame.until, now >= until { again = false }
                if again {
                    loops.append(frame)
                    pc = start + 1
                } else {
                    pc += 1
                }
            case .choose(let cumulative, let targets):
                let point = Double.random(in: 0..<(cumulative.last ?? 1), using: &generator)
                pc = targets[cumulative.firstIndex { point < $0 } ?? targets.count - 1]
            case .jump(let target):
                pc = target
            case .step(.login):
                pc += 1  // already logged in
            case .step(.logout):
                return .logout
            case .step(let action):
                return .step(action, instruction)
            }
        }
        return .logout
    }
}
