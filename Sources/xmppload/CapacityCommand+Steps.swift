import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadResults

// Runs a capacity search's steps: one LoadRun per step with the step's plan, judged on its own intervals.

/// Drives a `CapacitySearch` with real steps: each step is a `LoadRun` of its own (its own
/// histograms, its own results directory under `steps/`), watched by a `CapacityStepWatch` that
/// tags its intervals into the search's intervals.jsonl and cuts a collapsing step short; then
/// judged by `CapacityJudge`. Writes summary.json (`capacity`) and report.html at the end (also
/// when interrupted). `@unchecked Sendable`: `current` and `stopped` are only touched under `lock`.
final class CapacityRunner: @unchecked Sendable {
    let setup: CapacityCommand.Setup
    let configuration: RunConfiguration
    let directory: ResultsDirectory
    let profileName: String
    private let lock = NSLock()
    private var current: LoadRun?
    private var stopped = false

    /// Pause after a passing step so the server settles (sessions of the last step have logged out);
    /// after a failed one the pause is the warm-up's length, if longer.
    static let pause = Duration.seconds(1)

    init(setup: CapacityCommand.Setup, configuration: RunConfiguration, directory: ResultsDirectory, profileName: String) {
        self.setup = setup
        self.configuration = configuration
        self.directory = directory
        self.profileName = profileName
    }

    /// SIGINT/SIGTERM stopped the search.
    var interrupted: Bool { lock.withLock { stopped } }

    private func requestStop() {
        let run = lock.withLock { () -> LoadRun? in
            stopped = true
            return current
        }
        run?.requestStop()
    }

    /// The plan of one step: the asked load for warm-up + hold.
    func plan(load: Double) -> LoadPlan {
        let total = setup.warmup + setup.hold
        var plan: LoadPlan
        switch setup.dimension {
        case .arrivalRate: plan = .open(rate: load, duration: total)
        case .sessions: plan = .closed(sessions: Swift.max(1, Int(load.rounded())), ramp: setup.warmup, duration: total)
        }
        plan.seed = setup.seed
        plan.gracefulStop = setup.gracefulStop
        return plan
    }

    func search() async throws -> CapacityResult {
        var search = CapacitySearch(setup.settings)
        var steps: [CapacityStep] = []
        let signals = SignalTrap(signals: [SIGINT, SIGTERM]) { [self] in requestStop() }
        defer { signals.cancel() }
        let log = try CapacityIntervalLog(path: directory.file(ResultsDirectory.intervalsFile))
        let dimension = setup.dimension
        Console.print(
            "xmppload capacity: \(profileName) → \(configuration.host):\(configuration.port) (\(configuration.domain)); searching \(dimension == .arrivalRate ? "logins/s" : "sessions") from \(dimension.short(setup.settings.start)) to \(dimension.short(setup.settings.max)); rules: \(setup.rules.map(\.text).joined(separator: ", "))"
        )
        Console.print(
            "each step: \(DurationText.format(setup.warmup)) warm-up + \(DurationText.format(setup.hold)) judged (interval \(DurationText.format(setup.interval))); results: \(directory.path)"
        )
        var lateNotes: [String] = []
        while case .step(let load, let purpose) = search.next, !interrupted {
            let index = steps.count + 1
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
                configuration: stepConfiguration, definition: setup.options.definition, plan: plan(load: load),
                runID: setup.options.runID.map { "\($0)-step\(index)" })
            let watch = CapacityStepWatch(
                step: index, asked: load, warmup: setup.warmup.seconds, rules: setup.rules, log: log)
            Console.print("step \(index) (\(purpose.rawValue)): \(dimension.format(load)) …")
            lock.withLock { current = run }
            do {
                _ = try await run.run(outputs: [watch])
            } catch {
                lock.withLock { current = nil }
                FileHandle.standardError.write(Data("xmppload: step \(index) could not run: \(error)\n".utf8))
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            lock.withLock { current = nil }
            if interrupted { break }
            let step = CapacityJudge.judge(
                intervals: watch.intervals, rules: setup.rules, dimension: dimension, asked: load, warmup: setup.warmup.seconds,
                loadEnd: (setup.warmup + setup.hold).seconds, index: index, purpose: purpose, cutAt: watch.cutAt,
                directory: "steps/\(name)")
            steps.append(step)
            Console.print("  " + Self.line(step, rules: setup.rules, dimension: dimension))
            search.record(step.outcome)
            // After an overload the server may still be draining it: give it a warm-up's time (a
            // ladder waits for its next slot instead).
            if ladderStart(index + 1) == nil {
                try await Task.sleep(for: step.outcome == .pass ? Self.pause : Swift.max(Self.pause, setup.warmup))
            }
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
    var ladderSlot: Duration { setup.warmup + setup.hold + setup.gracefulStop + .seconds(2) }

    /// When step `index` (1-based) of a ladder of several generators starts: `--start-at` + (index − 1)
    /// × `ladderSlot`; nil for a search of one generator.
    func ladderStart(_ index: Int) -> Date? {
        guard configuration.segment.count > 1, let startAt = configuration.startAt else { return nil }
        return startAt.addingTimeInterval(Double(index - 1) * ladderSlot.seconds)
    }

    /// `achieved 12.0/s, logins 11.9/s, errors 0 %, login.p99 250 ms — pass`.
    static func line(_ step: CapacityStep, rules: [Threshold], dimension: CapacityDimension) -> String {
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

/// The search's intervals.jsonl: every step's intervals, each line the interval's own JSON (as a
/// run writes it) plus `step` (1-based) and `asked` (the step's load). Times restart at 0 each step.
/// `@unchecked Sendable`: written from one step's run output at a time (steps run one after another).
final class CapacityIntervalLog: @unchecked Sendable {
    private let handle: FileHandle

    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    deinit { try? handle.close() }

    func append(_ snapshot: IntervalSnapshot, step: Int, asked: Double) throws {
        let line = try ResultsDirectory.line(for: snapshot)
        guard var object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { return }
        object["step"] = step
        object["asked"] = asked
        var data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        data.append(0x0A)
        try handle.write(contentsOf: data)
    }
}

/// A capacity step's run output: keeps the step's intervals (for `CapacityJudge`), appends them
/// tagged to the search's intervals.jsonl, and stops the step at the first interval after its
/// warm-up that shows a collapse (`CapacityJudge.collapse`). `@unchecked Sendable`: the run calls
/// its outputs from its one orchestrating task, one call at a time; `lock` guards the fields anyway.
final class CapacityStepWatch: RunOutput, @unchecked Sendable {
    let step: Int
    let asked: Double
    let warmup: Double
    let rules: [Threshold]
    let log: CapacityIntervalLog
    private let lock = NSLock()
    private var kept: [IntervalSnapshot] = []
    private var collapseReason: String?
    private var cutTime: Double?
    private var onlineBefore: Int64 = 0

    init(step: Int, asked: Double, warmup: Double, rules: [Threshold], log: CapacityIntervalLog) {
        self.step = step
        self.asked = asked
        self.warmup = warmup
        self.rules = rules
        self.log = log
    }

    var intervals: [IntervalSnapshot] { lock.withLock { kept } }
    /// Why the step was cut short, or nil.
    var collapse: String? { lock.withLock { collapseReason } }
    /// When the step was cut short (seconds since its start, the end of the interval that showed it), or nil.
    var cutAt: Double? { lock.withLock { cutTime } }

    func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
        let snapshot = interval.snapshot
        try? log.append(snapshot, step: step, asked: asked)
        return lock.withLock { () -> StopReason? in
            kept.append(snapshot)
            let before = onlineBefore
            onlineBefore = snapshot.gauge("sessions_online")
            guard collapseReason == nil, snapshot.start >= warmup - 1e-6, interval.planned.map({ interval.elapsed < $0 }) ?? true else { return nil }
            guard let found = CapacityJudge.collapse(in: snapshot, onlineBefore: before, rules: rules) else { return nil }
            collapseReason = found.reason
            cutTime = snapshot.end
            Console.print("  \(found.outcome.rawValue): \(found.reason) — cutting the step short")
            return .thresholdsFailed
        }
    }

    func runEnded(_ end: RunEnd) throws {}
}
