import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Synchronization

/// Drives a `CapacitySearch` with real steps: each step is a `LoadRun` of its own (its own
/// histograms, its own results directory under `steps/`), watched by a `CapacityStepWatch` (tags its
/// intervals into the search's intervals.jsonl, cuts a collapsing step short), then judged by
/// `CapacityJudge`. Writes summary.json (`capacity`) and report.html at the end (also when stopped).
///
/// A library type: `xmppload capacity` parses its flags into a `CapacitySetup`, prints what the
/// runner says through `say`, and maps the result to an exit status; tests run it without the binary.
/// Thread safety: `requestStop()` may come from any thread (a signal); the current step's run is
/// behind a `Mutex`.
public final class CapacityRunner: Sendable {
    /// A step that could not run at all (its `LoadRun` threw).
    public struct StepFailure: Error, CustomStringConvertible {
        public var step: Int
        public var underlying: String
        public var description: String { "step \(step) could not run: \(underlying)" }
    }

    private struct Current {
        var run: LoadRun?
        var stopped = false
    }

    public let setup: CapacitySetup
    public let configuration: RunConfiguration
    public let directory: ResultsDirectory
    public let profileName: String
    private let say: @Sendable (String) -> Void
    private let current = Mutex(Current())

    /// `say` gets the search's progress lines (the command prints them).
    public init(
        setup: CapacitySetup, configuration: RunConfiguration, directory: ResultsDirectory, profileName: String,
        say: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.setup = setup
        self.configuration = configuration
        self.directory = directory
        self.profileName = profileName
        self.say = say
    }

    /// The search was stopped (`requestStop`, e.g. SIGINT/SIGTERM).
    public var interrupted: Bool { current.withLock { $0.stopped } }

    /// Stops the search: the step in flight stops gracefully and no further step starts.
    public func requestStop() {
        let run = current.withLock { current -> LoadRun? in
            current.stopped = true
            return current.run
        }
        run?.requestStop()
    }

    public func search() async throws -> CapacityResult {
        var search = CapacitySearch(setup.settings)
        var steps: [CapacityStep] = []
        let log = try CapacityIntervalLog(path: directory.file(ResultsDirectory.intervalsFile))
        let dimension = setup.dimension
        say(
            "xmppload capacity: \(profileName) → \(configuration.host):\(configuration.port) (\(configuration.domain)); searching \(dimension == .arrivalRate ? "logins/s" : "sessions") from \(dimension.short(setup.settings.start)) to \(dimension.short(setup.settings.max)); rules: \(setup.rules.map(\.text).joined(separator: ", "))"
        )
        say(
            "each step: \(DurationText.format(setup.warmup)) warm-up + \(DurationText.format(setup.hold)) judged (interval \(DurationText.format(setup.interval))); results: \(directory.path)"
        )
        var lateNotes: [String] = []
        // Each step starts on a settled server (a ladder of several generators waits for its slot
        // instead): its backlog drained, its CPU back near the idle level measured now.
        let settler = ladderStart(1) == nil ? StepSettler(configuration: configuration) : nil
        var startState = await settler?.measureIdle()
        if let startState { say("  \(startState.reason)") }
        while case .step(let load, let purpose) = search.next, !interrupted {
            let index = steps.count + 1
            if index > 1, let settler {
                let state = await settler.settle(stopped: { [self] in self.interrupted })
                say("  \(state.settled ? "" : "warning: ")\(state.reason) (waited \(String(format: "%.1f", state.waitedSeconds)) s)")
                startState = state
                if interrupted { break }
            }
            if let due = ladderStart(index) {
                // A ladder of several generators: every one starts step k at the same time.
                let wait = due.timeIntervalSinceNow
                if wait > 0 {
                    try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                } else if wait < -1 {
                    lateNotes.append(
                        "step \(index) started \(Int((-wait).rounded())) s after its slot: the step before it overran (a longer --step-duration gap is needed)"
                    )
                }
                if interrupted { break }
            }
            let name = String(format: "%02d-", index) + dimension.short(load).replacingOccurrences(of: "/", with: "per")
            var stepConfiguration = configuration
            stepConfiguration.outputDirectory = (directory.path as NSString).appendingPathComponent("steps/\(name)")
            let run = LoadRun(
                configuration: stepConfiguration, definition: setup.options.definition, plan: setup.plan(load: load),
                runID: setup.options.runID.map { "\($0)-step\(index)" })
            let watch = CapacityStepWatch(step: index, asked: load, warmup: setup.warmup.seconds, rules: setup.rules, log: log)
            say("step \(index) (\(purpose.rawValue)): \(dimension.format(load)) …")
            current.withLock { $0.run = run }
            let outcome: RunResult
            do {
                let judge = RunJudge(evaluator: run.defaultJudge.evaluator, stopRule: watch.stopRule)
                outcome = try await run.run(judge: judge, sinks: [watch.sink, StepNotices(say: say)])
            } catch {
                current.withLock { $0.run = nil }
                throw StepFailure(step: index, underlying: "\(error)")
            }
            current.withLock { $0.run = nil }
            if interrupted { break }
            var step = CapacityJudge.judge(
                intervals: watch.intervals, rules: setup.rules, dimension: dimension, asked: load, warmup: setup.warmup.seconds,
                loadEnd: (setup.warmup + setup.hold).seconds, index: index, purpose: purpose, cutAt: watch.cutAt,
                directory: "steps/\(name)")
            step.start = startState
            step.limit = outcome.summary.limit
            steps.append(step)
            say("  " + Self.line(step, rules: setup.rules, dimension: dimension))
            search.record(step.outcome)
        }
        var result = CapacityResult(
            search: search, steps: steps, rules: setup.rules, dimension: dimension, warmupSeconds: setup.warmup.seconds,
            stepSeconds: setup.hold.seconds)
        result.notes += lateNotes
        if configuration.segment.count > 1 {
            result.notes.append(
                "segment \(configuration.segment): this table judges this generator's share of each step; `xmppload report` on every generator's directory judges the whole run's steps"
            )
        }
        try write(result)
        return result
    }

    /// How long one step of a ladder takes at most: warm-up, hold, the graceful stop and 2 s to settle.
    public var ladderSlot: Duration { setup.warmup + setup.hold + setup.gracefulStop + .seconds(2) }

    /// When step `index` (1-based) of a ladder of several generators starts: `--start-at` + (index − 1)
    /// × `ladderSlot`; nil for a search of one generator.
    public func ladderStart(_ index: Int) -> Date? {
        guard configuration.segment.count > 1, let startAt = configuration.startAt else { return nil }
        return startAt.addingTimeInterval(Double(index - 1) * ladderSlot.seconds)
    }

    /// `achieved 12.0/s, logins 11.9/s, errors 0 %, login.p99 250 ms — pass`.
    public static func line(_ step: CapacityStep, rules: [Threshold], dimension: CapacityDimension) -> String {
        var parts = [
            "achieved \(dimension == .arrivalRate ? CapacityStep.number(step.achieved) + "/s" : CapacityStep.number(step.achieved) + " online")",
            "logins \(CapacityStep.number(step.loginsPerSecond))/s", "errors \(VerdictUnit.fraction.format(step.errorRate))",
        ]
        for (rule, result) in zip(rules, step.rules) {
            parts.append("\(rule.text): \(result.value.map { result.unit.format($0) } ?? "no data")")
        }
        var text = parts.joined(separator: ", ") + " — \(step.outcome.rawValue)"
        if step.cutShort { text += " (cut short)" }
        if let reason = step.reason { text += ": \(reason)" }
        if let limit = step.limit, limit.limitedBy == .server || limit.limitedBy == .generator { text += " [\(limit.limitedBy.rawValue)-bound]" }
        return text
    }

    /// summary.json (`{"capacity": …}`) and report.html of the search.
    func write(_ result: CapacityResult) throws {
        let data = try result.summaryFile()
        try data.write(to: URL(fileURLWithPath: directory.file(ResultsDirectory.summaryFile)), options: .atomic)
        try Data(result.html(title: profileName).utf8).write(
            to: URL(fileURLWithPath: directory.file(ResultsDirectory.reportFile)), options: .atomic)
        _ = directory.releaseReserve()
    }
}

/// Tells the search's console when a step is cut short.
private struct StepNotices: RunSink {
    let say: @Sendable (String) -> Void

    func intervalEnded(_ interval: IntervalEnd) {}

    func notice(_ notice: RunNotice) {
        if case .stopRuleFired(let reason) = notice { say("  " + reason) }
    }
}
