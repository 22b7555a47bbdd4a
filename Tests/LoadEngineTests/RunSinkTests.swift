import Foundation
import LoadProfile
import LoadResults
import NIOCore
import Testing
import XMPPCore

@testable import LoadEngine

/// A real run (real event loops, real sockets on loopback) judges itself and fans its snapshots out
/// to its sinks; its judge's stop rule or an input can stop it, a sink cannot. The "server" is a
/// bound loopback port that does not listen, so every connection is refused at once: what is tested
/// here is the run's orchestration, not XMPP.
@Suite(.serialized) struct RunSinkTests {
    /// Records what it is given.
    final class RecordingSink: RunSink, @unchecked Sendable {
        // @unchecked: every field is only touched while holding `lock`.
        private let lock = NSLock()
        private var intervals: [IntervalEnd] = []
        private var notices: [RunNotice] = []
        private var ends: [RunEnd] = []

        func intervalEnded(_ interval: IntervalEnd) { lock.withLock { intervals.append(interval) } }
        func notice(_ notice: RunNotice) { lock.withLock { notices.append(notice) } }
        func runEnded(_ end: RunEnd) { lock.withLock { ends.append(end) } }

        var seen: (intervals: [IntervalEnd], notices: [RunNotice], ends: [RunEnd]) {
            lock.withLock { (intervals, notices, ends) }
        }
    }

    /// A stop rule that fires at its `stopAt`-th interval.
    struct CountingRule: RunJudge.StopRule {
        let stopAt: Int
        var seen = 0
        mutating func observe(_ interval: IntervalEnd) -> String? {
            seen += 1
            return seen == stopAt ? "interval \(seen)" : nil
        }
    }

    /// An input that asks the run to stop once it has seen `after` intervals through its steering.
    final class StoppingInput: RunInput, @unchecked Sendable {
        // @unchecked: `task` is only touched while holding `lock`.
        private let lock = NSLock()
        private var task: Task<Void, Never>?
        let after: Int

        init(after: Int) { self.after = after }

        func start(steering: RunSteering, group: any EventLoopGroup) async throws -> RunNotice? {
            let after = after
            let watching = Task {
                while !Task.isCancelled {
                    if let last = steering.latestInterval, last.end >= Double(after) * 0.2 - 1e-6 {
                        steering.record(ControlEvent(at: steering.elapsed, action: "stop", text: "stop asked by the test input"))
                        steering.requestStop(reason: .interrupted)
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            lock.withLock { task = watching }
            return .inputEndpoint(name: "test", url: "memory")
        }

        func stop() async { lock.withLock { task }?.cancel() }
    }

    /// A loopback port that refuses connections for as long as the returned descriptor stays open.
    static func refusingPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw IOError(errnoCode: errno, reason: "bind")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static let profile = """
        name: refused
        steps:
          - login
          - stay_online
          - logout
        """

    func run(
        plan: LoadPlan, judge: RunJudge? = nil, inputs: [any RunInput] = []
    ) async throws -> (RunResult, RecordingSink, ResultsDirectory) {
        let (fd, port) = try Self.refusingPort()
        defer { close(fd) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-sinks-\(UUID().uuidString.prefix(8))").path
        let configuration = RunConfiguration(
            host: "127.0.0.1", port: port, domain: "load.test", accounts: 1...5,
            password: "secret", tls: TLSMode.none, outputDirectory: out,
            interval: .milliseconds(200), messageGrace: .milliseconds(200), eventLoops: 2)
        let definition = try ProfileLoader.load(yaml: Self.profile, file: "refused.yaml")
        let sink = RecordingSink()
        let result = try await LoadRun(configuration: configuration, definition: definition, plan: plan).run(
            judge: judge, sinks: [sink], inputs: inputs)
        return (result, sink, ResultsDirectory(path: out))
    }

    /// A long ramp: the run cannot end on its own (every session failed, loops idle) before the stop,
    /// however late a busy machine takes the snapshots.
    static let longPlan = LoadPlan.closed(sessions: 5, ramp: .seconds(30), duration: .seconds(600))

    @Test(.timeLimit(.minutes(1)))
    func theJudgesStopRuleStopsTheRunAndEverySinkGetsTheSameSnapshots() async throws {
        let plan = Self.longPlan
        let definition = try ProfileLoader.load(yaml: Self.profile, file: "refused.yaml")
        let judge = RunJudge(
            evaluator: RunJudge.evaluator(plan: plan, definition: definition, segment: Segment(index: 0, count: 1)),
            stopRule: CountingRule(stopAt: 2))
        let (result, sink, directory) = try await run(plan: plan, judge: judge)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let summary = result.summary
        let seen = sink.seen

        #expect(summary.stopReason == StopReason.thresholdsFailed.rawValue)
        #expect(seen.notices == [.stopRuleFired("interval 2"), .stopping(reason: .thresholdsFailed)])
        #expect(seen.ends.count == 1)
        #expect(seen.ends.first?.summary == summary)
        #expect(seen.ends.first?.verdict == result.verdict)
        #expect(seen.ends.first?.manifest.stopReason == StopReason.thresholdsFailed.rawValue)
        // The stop came at the second interval; the last snapshot is taken when the run is done.
        #expect(seen.intervals.count >= 3)
        #expect(seen.intervals.allSatisfy { $0.planned == .seconds(600) })
        // intervals.jsonl holds the same snapshots, in the same order.
        let writtenIntervals = try directory.readIntervals()
        #expect(writtenIntervals == seen.intervals.map(\.snapshot))
        #expect(seen.intervals.last?.cumulative.counter(.sessionsStarted) == summary.sessions.started)
        // Connections are refused: every session that started failed, and the run's own verdict says
        // it did not work.
        #expect(summary.sessions.failed == summary.sessions.started)
        #expect(result.verdict.outcome.failed)
        // summary.json and the manifest are written before the sinks hear of the end (dates in
        // files keep whole seconds, so compare the rest).
        let written = try directory.readSummary()
        #expect(written.stopReason == summary.stopReason && written.sessions == summary.sessions)
        #expect(written.verdict == summary.verdict)
        #expect(try directory.readManifest().stopReason == StopReason.thresholdsFailed.rawValue)
    }

    /// report.html is rendered from memory at the run's end, and `xmppload report DIR` renders the
    /// same page from the written files.
    @Test(.timeLimit(.minutes(1)))
    func endOfRunReportEqualsTheReportFromTheDirectory() async throws {
        let (result, sink, directory) = try await run(plan: .closed(sessions: 5, ramp: .seconds(1), duration: nil))
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        // Every connection was refused: the run's own verdict names what happened as its stop reason.
        #expect(result.verdict.outcome.failed)
        #expect(result.summary.stopReason == result.verdict.outcome.kind.rawValue)
        #expect(sink.seen.notices.isEmpty)
        let html = try String(contentsOfFile: directory.file(ResultsDirectory.reportFile), encoding: .utf8)
        #expect(html == HTMLReport.render(try MergedResults.load(directories: [directory.path])))
        #expect(html.contains(result.summary.runID))
    }

    /// With `--abort-on-fail` the run's judge stops it at the first failing interval after the
    /// warm-up, tells the sinks which threshold, and the verdict is in summary.json and in what the
    /// run returns — no sink is involved in judging.
    @Test(.timeLimit(.minutes(1)))
    func theJudgeStopsTheRunAtAFailingThresholdAndTheVerdictIsWrittenOnce() async throws {
        let rule = try Threshold.parse("sessions.failed == 0")
        let judge = RunJudge(evaluator: VerdictEvaluator(rules: [rule]), abortOnFail: true)
        let (result, sink, directory) = try await run(plan: Self.longPlan, judge: judge)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let summary = result.summary
        #expect(summary.stopReason == StopReason.thresholdsFailed.rawValue)
        let told = sink.seen.notices.compactMap { notice -> String? in
            if case .thresholdFailed(let failed) = notice { return failed.threshold }
            return nil
        }
        #expect(told == ["sessions.failed == 0"])
        #expect(result.verdict.thresholds.map(\.status) == [.fail])
        #expect(summary.thresholds == result.verdict.thresholds)
        #expect(try directory.readSummary().thresholds?.map(\.status) == [.fail])
        let end = try #require(sink.seen.ends.first)
        #expect(end.summary.thresholds == result.verdict.thresholds)
        #expect(end.timeline.points.count == sink.seen.intervals.count)
    }

    /// An input steers the run only through its steering: its stop ends the run as SIGINT does, and
    /// the change it recorded is in intervals.jsonl and summary.json; the sinks are told where it
    /// serves and of the change.
    @Test(.timeLimit(.minutes(1)))
    func anInputStopsTheRunThroughItsSteeringAndItsChangeIsRecorded() async throws {
        let (result, sink, directory) = try await run(plan: Self.longPlan, inputs: [StoppingInput(after: 2)])
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        #expect(result.summary.stopReason == StopReason.interrupted.rawValue)
        #expect(result.summary.controlEvents?.map(\.action) == ["stop"])
        let notices = sink.seen.notices
        #expect(notices.first == .inputEndpoint(name: "test", url: "memory"))
        #expect(notices.contains { if case .controlChanged(let change) = $0 { return change.action == "stop" } else { return false } })
        #expect(notices.contains(.stopping(reason: .interrupted)))
        let lines = try String(contentsOfFile: directory.file(ResultsDirectory.intervalsFile), encoding: .utf8)
        #expect(lines.contains("stop asked by the test input"))
    }
}
