import Foundation
import LoadEngine
import LoadResults
import Synchronization

/// One capacity step's view of its run, in two parts the step's `LoadRun` is given: a stop rule for
/// its judge (`RunJudge.StopRule`: the first interval after the warm-up that shows a collapse,
/// `CapacityJudge.collapse`, cuts the step short) and a sink that keeps the step's intervals (for
/// `CapacityJudge`) and appends them, tagged, to the search's intervals.jsonl.
///
/// Thread safety: the run calls both from its one orchestrating task; the runner reads the results
/// after the run returned. What they keep is behind one `Mutex` anyway (they are reference types
/// shared between the run and the runner).
public final class CapacityStepWatch: Sendable {
    private struct Kept {
        var intervals: [IntervalSnapshot] = []
        var collapseReason: String?
        var cutTime: Double?
        var onlineBefore: Int64 = 0
    }

    let step: Int
    let asked: Double
    let warmup: Double
    let rules: [Threshold]
    let log: CapacityIntervalLog?
    private let kept = Mutex(Kept())

    public init(step: Int, asked: Double, warmup: Double, rules: [Threshold], log: CapacityIntervalLog?) {
        self.step = step
        self.asked = asked
        self.warmup = warmup
        self.rules = rules
        self.log = log
    }

    /// The step's intervals so far.
    public var intervals: [IntervalSnapshot] { kept.withLock { $0.intervals } }
    /// Why the step was cut short, or nil.
    public var collapse: String? { kept.withLock { $0.collapseReason } }
    /// When the step was cut short (seconds since its start, the end of the interval that showed it), or nil.
    public var cutAt: Double? { kept.withLock { $0.cutTime } }

    /// The stop rule for the step's judge.
    public var stopRule: CollapseRule { CollapseRule(watch: self) }
    /// The sink for the step's run.
    public var sink: IntervalSink { IntervalSink(watch: self) }

    /// Cuts the step at the first collapse after its warm-up.
    public struct CollapseRule: RunJudge.StopRule {
        let watch: CapacityStepWatch

        public mutating func observe(_ interval: IntervalEnd) -> String? {
            let snapshot = interval.snapshot
            return watch.kept.withLock { kept -> String? in
                let before = kept.onlineBefore
                kept.onlineBefore = snapshot.gauge("sessions_online")
                guard kept.collapseReason == nil, snapshot.start >= watch.warmup - 1e-6,
                    interval.planned.map({ interval.elapsed < $0 }) ?? true
                else { return nil }
                guard let found = CapacityJudge.collapse(in: snapshot, onlineBefore: before, rules: watch.rules) else { return nil }
                kept.collapseReason = found.reason
                kept.cutTime = snapshot.end
                return "\(found.outcome.rawValue): \(found.reason) — cutting the step short"
            }
        }
    }

    /// Keeps the step's intervals and appends them, tagged, to the search's intervals.jsonl.
    public struct IntervalSink: RunSink {
        let watch: CapacityStepWatch

        public func intervalEnded(_ interval: IntervalEnd) {
            try? watch.log?.append(interval.snapshot, step: watch.step, asked: watch.asked)
            watch.kept.withLock { $0.intervals.append(interval.snapshot) }
        }
    }
}

/// The search's intervals.jsonl: every step's intervals, each line the interval's own JSON (as a
/// run writes it) plus `step` (1-based) and `asked` (the step's load). Times restart at 0 each step.
/// `@unchecked Sendable`: written from one step's run at a time (steps run one after another).
public final class CapacityIntervalLog: @unchecked Sendable {
    private let handle: FileHandle

    public init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    deinit { try? handle.close() }

    public func append(_ snapshot: IntervalSnapshot, step: Int, asked: Double) throws {
        let line = try ResultsDirectory.line(for: snapshot)
        guard var object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { return }
        object["step"] = step
        object["asked"] = asked
        var data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        data.append(0x0A)
        try handle.write(contentsOf: data)
    }
}
