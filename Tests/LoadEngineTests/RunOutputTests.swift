import Foundation
import LoadProfile
import LoadResults
import NIOCore
import Testing
import XMPPCore

@testable import LoadEngine

/// A real run (real event loops, real sockets on loopback) fans its snapshots out to its outputs, and
/// an output can stop it. The "server" is a bound loopback port that does not listen, so every
/// connection is refused at once: what is tested here is the run's orchestration, not XMPP.
@Suite(.serialized) struct RunOutputTests {
    /// Records what it is given; asks the run to stop at its `stopAt`-th interval.
    final class RecordingOutput: RunOutput, @unchecked Sendable {
        // @unchecked: every field is only touched while holding `lock`.
        private let lock = NSLock()
        private let stopAt: Int?
        private var intervals: [IntervalEnd] = []
        private var events: [ProgressEvent] = []
        private var ends: [RunEnd] = []

        init(stopAt: Int?) { self.stopAt = stopAt }

        func intervalEnded(_ interval: IntervalEnd) throws -> StopReason? {
            lock.withLock {
                intervals.append(interval)
                return intervals.count == stopAt ? .thresholdsFailed : nil
            }
        }
        func progress(_ event: ProgressEvent) { lock.withLock { events.append(event) } }
        func runEnded(_ end: RunEnd) throws { lock.withLock { ends.append(end) } }

        var seen: (intervals: [IntervalEnd], events: [ProgressEvent], ends: [RunEnd]) {
            lock.withLock { (intervals, events, ends) }
        }
    }

    /// What a `ThresholdWatch` announced. `@unchecked Sendable`: `added` is only touched holding `lock`.
    final class Announced: @unchecked Sendable {
        private let lock = NSLock()
        private var added: [String] = []
        func add(_ line: String) { lock.withLock { added.append(line) } }
        var lines: [String] { lock.withLock { added } }
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

    func run(stopAt: Int?, plan: LoadPlan, also extra: [any RunOutput] = []) async throws -> (RunSummary, RecordingOutput, ResultsDirectory) {
        let (fd, port) = try Self.refusingPort()
        defer { close(fd) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-outputs-\(UUID().uuidString.prefix(8))").path
        let configuration = RunConfiguration(
            host: "127.0.0.1", port: port, domain: "load.test", accounts: 1...5,
            password: "secret", tls: TLSMode.none, outputDirectory: out,
            interval: .milliseconds(200), messageGrace: .milliseconds(200), eventLoops: 2)
        let definition = try ProfileLoader.load(yaml: Self.profile, file: "refused.yaml")
        let output = RecordingOutput(stopAt: stopAt)
        let summary = try await LoadRun(configuration: configuration, definition: definition, plan: plan).run(outputs: extra + [output])
        return (summary, output, ResultsDirectory(path: out))
    }

    @Test(.timeLimit(.minutes(1)))
    func anOutputStopsTheRunAndEveryOutputGetsTheSameSnapshots() async throws {
        // A long ramp: the run cannot end on its own (every session failed, loops idle) before the stop,
        // however late a busy machine takes the snapshots.
        let (summary, output, directory) = try await run(stopAt: 2, plan: .closed(sessions: 5, ramp: .seconds(30), duration: .seconds(600)))
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let seen = output.seen

        #expect(summary.stopReason == StopReason.thresholdsFailed.rawValue)
        #expect(seen.events == [.stopping(reason: .thresholdsFailed)])
        #expect(seen.ends.count == 1)
        #expect(seen.ends.first?.summary == summary)
        #expect(seen.ends.first?.manifest.stopReason == StopReason.thresholdsFailed.rawValue)
        // The stop came at the second interval; the last snapshot is taken when the run is done.
        #expect(seen.intervals.count >= 3)
        #expect(seen.intervals.allSatisfy { $0.planned == .seconds(600) })
        // The file outputs got the same snapshots, in the same order.
        let writtenIntervals = try directory.readIntervals()
        #expect(writtenIntervals == seen.intervals.map(\.snapshot))
        #expect(seen.intervals.last?.cumulative.counter(.sessionsStarted) == summary.sessions.started)
        // Connections are refused: every session that started failed.
        #expect(summary.sessions.failed == summary.sessions.started)
        // summary.json and the manifest are written before the outputs hear of the end (dates in
        // files keep whole seconds, so compare the rest).
        let written = try directory.readSummary()
        #expect(written.stopReason == summary.stopReason && written.sessions == summary.sessions)
        #expect(try directory.readManifest().stopReason == StopReason.thresholdsFailed.rawValue)
    }

    /// report.html is rendered from memory at the run's end, and `xmppload report DIR` renders the
    /// same page from the written files.
    @Test(.timeLimit(.minutes(1)))
    func endOfRunReportEqualsTheReportFromTheDirectory() async throws {
        let (summary, output, directory) = try await run(stopAt: nil, plan: .closed(sessions: 5, ramp: .seconds(1), duration: nil))
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        #expect(summary.stopReason == StopReason.completed.rawValue)
        #expect(output.seen.events.isEmpty)
        let html = try String(contentsOfFile: directory.file(ResultsDirectory.reportFile), encoding: .utf8)
        #expect(html == HTMLReport.render(try MergedResults.load(directories: [directory.path])))
        #expect(html.contains(summary.runID))
    }

    /// The threshold watch is an output like the others: with `--abort-on-fail` it stops the run at
    /// the first failing interval, and it puts the verdict into the summary before summary.json is
    /// written; the outputs after it see the judged summary.
    @Test(.timeLimit(.minutes(1)))
    func theThresholdWatchStopsTheRunAndJudgesItBeforeTheSummaryIsWritten() async throws {
        let rule = try Threshold.parse("sessions.failed == 0")
        let announced = Announced()
        let watch = ThresholdWatch(evaluator: VerdictEvaluator(rules: [rule]), abortOnFail: true) { announced.add($0.threshold) }
        let (summary, output, directory) = try await run(
            stopAt: nil, plan: .closed(sessions: 5, ramp: .seconds(30), duration: .seconds(600)), also: [watch])
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        #expect(summary.stopReason == StopReason.thresholdsFailed.rawValue)
        #expect(announced.lines == ["sessions.failed == 0"])
        let verdict = try #require(watch.verdict)
        #expect(verdict.thresholds.map(\.status) == [.fail])
        #expect(summary.thresholds == verdict.thresholds)
        #expect(try directory.readSummary().thresholds?.map(\.status) == [.fail])
        // The later output's end carries the judged summary and the run's own timeline of every interval.
        let end = try #require(output.seen.ends.first)
        #expect(end.summary.thresholds == verdict.thresholds)
        #expect(end.timeline.points.count == output.seen.intervals.count)
    }
}
