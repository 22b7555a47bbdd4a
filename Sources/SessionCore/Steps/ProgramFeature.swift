// The profile's program as a session feature: where it is, what its current step waits for, when.
import LoadProfile
import LoadResults
import XMPPCore

/// The profile's program after login (`SessionScript`): where the session is in it (`StepProgram`:
/// program counter, open loops, when the current step was due and began), what the current step
/// waits for and until when, think times, `stay_online`, the `wait` step, the run's stop — and the
/// things it lends the step features while they start a step (`StepTools`: its seeded generator and
/// its request ids). It never starts a step of another feature itself: it says which step is next
/// (`next`), the machine hands it to the feature that owns it, and the program takes the outcome
/// (`take`). Its two timers are its own: the waiting step's timeout (coarse) and a think time's end
/// (precise).
///
/// Timing: each step counts from the time it was due (the end of the previous step plus think time)
/// and from when it actually started.
struct ProgramFeature {
    /// Which feature the current step belongs to, while it waits for the server.
    enum Owner: Equatable {
        case presence
        case roster
        case query
        case muc
        /// A `wait` step (the program's own): a stanza matching its condition completes it.
        case wait
        /// A feature step (`FeatureStep`) of the request feature at this index (`SessionFeatures`).
        case feature(UInt16)
    }

    /// What the program is doing between steps.
    enum Current: Equatable {
        /// Nothing: the next step starts when the machine runs the program.
        case idle
        /// The current step waits for an answer from the server until `deadline`.
        case waiting(Owner, deadline: SessionInstant)
        /// A think time runs until `due`.
        case thinking(due: SessionInstant)
        /// `stay_online`: nothing but the run's end.
        case stayingOnline
    }

    private(set) var program: StepProgram
    private(set) var current: Current = .idle
    /// The program's seeded generator: think times, choices, targets, `${random}`.
    private var generator: SeededGenerator
    /// The last request number used (`q<n>`).
    private var requestCounter: UInt32 = 0
    /// The run's load phase ended for this session: finish the step in flight, then log out.
    private(set) var stopRequested = false

    init(start: SessionInstant, generator: SeededGenerator) {
        program = StepProgram(start: start)
        self.generator = generator
    }

    /// The coarse timer: the waiting step's timeout.
    var deadline: SessionInstant? {
        if case .waiting(_, let deadline) = current { return deadline }
        return nil
    }

    /// The precise timer: a think time's end.
    var wake: SessionInstant? {
        if case .thinking(let due) = current { return due }
        return nil
    }

    /// The feature the current step waits on, if it waits for the server.
    var waitingOn: Owner? {
        if case .waiting(let owner, _) = current { return owner }
        return nil
    }

    /// The instruction of the current step.
    func instruction(_ s: SessionShared) -> SessionScript.Instruction { s.script.instructions[program.pc] }

    // MARK: - Lending

    /// The tools a step feature uses while it starts a step or reads an answer (`values`: other
    /// features' template values); give them back with `takeBack`.
    func lend(_ values: TemplateValues) -> StepTools {
        StepTools(generator: generator, requestCounter: requestCounter, values: values)
    }

    mutating func takeBack(_ tools: StepTools) {
        generator = tools.generator
        requestCounter = tools.requestCounter
    }

    // MARK: - Walking the program

    /// A fresh login: run from the first step after the login, due now; open loops are forgotten.
    mutating func begin(_ s: SessionShared) {
        forget()
        program.advance(to: s.script.firstInstructionAfterLogin, intended: s.now)
    }

    /// Forgets what belonged to a lost stream: the step in flight and open loops.
    mutating func forget() {
        current = .idle
        program.forgetLoops()
    }

    /// What comes next: a step to start (its action and instruction), or the logout (a `logout`
    /// step, the program's end, or a stop asked for). Marks when the step started.
    mutating func next(_ s: SessionShared) -> StepProgram.Next {
        guard !stopRequested else { return .logout }
        let next = program.next(in: s.script, now: s.now, using: &generator)
        if case .step = next { program.stepStart = s.now }
        return next
    }

    /// When the current step was due (the origin of its corrected latency).
    var stepIntended: SessionInstant { program.stepIntended }

    /// Takes the outcome of the step just started or answered (owned by `owner`): records and
    /// advances, or waits, or fails. Returns the error that ends the session, if any.
    mutating func take(_ outcome: StepOutcome, owner: Owner, _ s: inout SessionShared) -> SessionError? {
        switch outcome {
        case .completed(let measured):
            complete(measured: measured, &s)
            return nil
        case .waiting(let timeout):
            current = .waiting(owner, deadline: s.now + timeout)
            return nil
        case .failed(let error):
            return fail(error, &s)
        }
    }

    /// The current step finished well: record it (when it is timed), advance.
    private mutating func complete(measured: Bool, _ s: inout SessionShared) {
        if measured {
            s.recordLatency(s.script.instructions[program.pc].metric, from: program.stepIntended, serviceFrom: program.stepStart)
        }
        current = .idle
        program.advanceToNext(intended: s.now)
        s.count(.stepsCompleted)
    }

    /// The current step failed: count it and go on, or return the error when the step says to stop.
    private mutating func fail(_ error: SessionError, _ s: inout SessionShared) -> SessionError? {
        current = .idle
        guard program.pc < s.script.instructions.count, s.script.instructions[program.pc].continueOnError else { return error }
        s.record(.error(kind: error.kind))
        program.advanceToNext(intended: s.now)
        return nil
    }

    // MARK: - The program's own steps

    /// `think`: the next step is due at the end of a think time drawn now.
    mutating func think(_ time: ThinkTime) {
        current = .thinking(due: program.stepStart + time.sample(using: &generator))
    }

    /// `stay_online`: nothing until the run ends (at once when it is ending already).
    mutating func stayOnline(stopping: Bool) {
        if stopping {
            stopRequested = true
            current = .idle
        } else {
            current = .stayingOnline
        }
    }

    /// `wait`: waits for a matching stanza, at most its timeout.
    mutating func wait(_ condition: WaitCondition, _ s: SessionShared) {
        current = .waiting(.wait, deadline: s.now + condition.timeout)
    }

    /// Whether `stanza` is what the current `wait` step waits for: element name, type (a message
    /// without one is `normal`) and sender pattern, each when given.
    func matchesWait(_ stanza: XMLElement, tools: inout StepTools, _ s: SessionShared) -> Bool {
        guard case .step(.wait(let condition)) = s.script.instructions[program.pc].operation else { return false }
        if let element = condition.element, stanza.name != element { return false }
        if let type = condition.type, (stanza.attribute("type") ?? (stanza.name == "message" ? "normal" : "")) != type {
            return false
        }
        if let from = condition.from {
            guard let actual = stanza.attribute("from"), GlobPattern(tools.render(from, s)).matches(actual) else { return false }
        }
        return true
    }

    // MARK: - Timers

    /// The think time ended: the next step is due at its end. False when none was due.
    mutating func thinkEnded(_ s: SessionShared) -> Bool {
        guard case .thinking(let due) = current, due <= s.now else { return false }
        current = .idle
        program.advanceToNext(intended: due)
        return true
    }

    /// The waiting step's timeout came: its owner says what that means. Nil when none was due.
    mutating func timedOut(_ s: SessionShared) -> Owner? {
        guard case .waiting(let owner, let deadline) = current, deadline <= s.now else { return nil }
        current = .idle
        return owner
    }

    // MARK: - Stopping, resting, resuming

    /// The run's load phase ended: true when the step in flight can be dropped now (think time, stay
    /// online, nothing), so the session logs out at once; else it finishes first and the program logs
    /// out after it.
    mutating func stop() -> Bool {
        stopRequested = true
        switch current {
        case .stayingOnline, .thinking, .idle:
            current = .idle
            return true
        case .waiting:
            return false
        }
    }

    /// The stream was resumed: a think time still running goes on (its end already passed: the next
    /// step is due at it); a step waiting for an answer gets its timeout again (the answer comes on
    /// the resumed stream). True when the program should run on now.
    mutating func resumed(_ s: SessionShared) -> Bool {
        switch current {
        case .thinking(let due):
            if due > s.now { return false }
            current = .idle
            program.advanceToNext(intended: due)
            return true
        case .waiting(let owner, _):
            current = .waiting(owner, deadline: s.now + s.script.instructions[program.pc].timeout)
            return false
        case .stayingOnline:
            return false
        case .idle:
            return true
        }
    }

    /// True while the program rests: nothing to do but stay online, or in a think time that lasts at
    /// least `minimum` more.
    func isResting(atLeast minimum: Duration, now: SessionInstant) -> Bool {
        switch current {
        case .stayingOnline: return true
        case .thinking(let due): return due >= now + minimum
        case .idle, .waiting: return false
        }
    }
}
