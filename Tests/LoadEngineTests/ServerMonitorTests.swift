import Foundation
import LoadResults
import NIOCore
import Synchronization
import Testing

@testable import LoadEngine

#if canImport(Glibc)
import Glibc
#endif

/// The monitor end to end on loopback: intervals on the run's grid from every source, hostile
/// endpoints (unreachable, slow, garbage, huge bodies, millions of series, errors) as gaps with one
/// warning each, and a well-behaved endpoint and a process beside them unaffected.
@Suite(.serialized) struct ServerMonitorTests {
    /// A short time limit, and fewer samples than the standard 200,000 so a debug build parses up to
    /// the limit well within it.
    static var quick: ScrapeLimits {
        var limits = ScrapeLimits()
        limits.timeout = 0.5
        limits.maxSamples = 20_000
        return limits
    }

    /// An endpoint whose counter goes up by 5 per scrape and whose gauge is 42.
    static func wellBehaved() throws -> TinyHTTPServer {
        let scrapes = Mutex(0)
        return try TinyHTTPServer { fd in
            let count = scrapes.withLock { value -> Int in
                value += 1
                return value
            }
            let body = "# TYPE requests counter\nrequests_total \(count * 5)\n# TYPE sessions gauge\nsessions 42\n# EOF\n"
            TinyHTTPServer.write(
                fd,
                "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        }
    }

    static func chunked(_ fd: Int32, lines: (Int) -> String, count: Int) {
        guard TinyHTTPServer.write(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") else { return }
        var chunk = ""
        for index in 0..<count {
            chunk += lines(index)
            if chunk.utf8.count >= 65_536 || index == count - 1 {
                guard TinyHTTPServer.write(fd, String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n") else { return }
                chunk = ""
            }
        }
        TinyHTTPServer.write(fd, "0\r\n\r\n")
    }

    @Test func hostileSourcesAreGapsWithOneWarningEachAndTheOthersGoOn() async throws {
        let good = try Self.wellBehaved()
        let slow = try TinyHTTPServer { _ in usleep(3_000_000) }
        let garbage = try TinyHTTPServer { fd in
            TinyHTTPServer.write(fd, [UInt8]("HTTP/1.1 200 OK\r\n\r\n".utf8) + (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        }
        let huge = try TinyHTTPServer { fd in
            Self.chunked(fd, lines: { _ in String(repeating: "#", count: 1023) + "\n" }, count: 100 * 1024)  // 100 MiB of comments
        }
        let millions = try TinyHTTPServer { fd in
            Self.chunked(fd, lines: { "a{i=\"\($0)\"} 1\n" }, count: 2_000_000)  // 2 million series, ~36 MB
        }
        let many = try TinyHTTPServer { fd in
            Self.chunked(fd, lines: { "s\($0) 1\n" }, count: 30_000)  // 30,000 short series, 220 KB: under the byte limit
        }
        let failing = try TinyHTTPServer { fd in TinyHTTPServer.write(fd, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n") }
        let servers = [good, slow, garbage, huge, millions, many, failing]
        defer { servers.forEach { $0.stop() } }
        let closed = TinyHTTPServer.closedPort()
        let specs = [
            "good=prometheus:http://127.0.0.1:\(good.port)/metrics?keep=all", "slow=prometheus:http://127.0.0.1:\(slow.port)/metrics",
            "garbage=prometheus:http://127.0.0.1:\(garbage.port)/metrics", "huge=prometheus:http://127.0.0.1:\(huge.port)/metrics",
            "millions=prometheus:http://127.0.0.1:\(millions.port)/metrics?keep=all",
            "many=prometheus:http://127.0.0.1:\(many.port)/metrics?keep=all",
            "failing=prometheus:http://127.0.0.1:\(failing.port)/metrics", "unreachable=prometheus:http://127.0.0.1:\(closed)/metrics",
            "self=process:\(getpid())",
        ]
        let (sources, problems) = MonitorSource.parseAll(specs)
        #expect(problems.isEmpty)
        let monitor = ServerMonitor(sources: sources, interval: .seconds(1), limits: Self.quick)
        let origin = NIODeadline.now()
        monitor.start(origin: origin)
        var intervals: [MonitorInterval] = []
        for _ in 0..<7 {
            try await Task.sleep(for: .milliseconds(500))
            intervals += monitor.take()
        }
        let finishedAt = NIODeadline.now()
        intervals += await monitor.finish(at: finishedAt)
        let finishing = Double((NIODeadline.now() - finishedAt).nanoseconds) / 1e9
        #expect(finishing < 2, "finish waited \(finishing) s")

        // Every interval of the run, in order, on the grid; the last one ends where the run did. (How
        // many depends on how long the sleeps really took on a busy machine: one per started second.)
        let elapsed = Double((finishedAt - origin).nanoseconds) / 1e9
        let count = Int(elapsed.rounded(.up))
        #expect(intervals.count == count, "\(elapsed) s")
        #expect(intervals.map(\.start) == (0..<count).map(Double.init))
        #expect(intervals.dropLast().map(\.end) == (1..<count).map(Double.init))
        #expect(abs(intervals.last!.end - Double((finishedAt - origin).nanoseconds) / 1e9) < 0.01)
        for interval in intervals { #expect(Set(interval.sources.keys) == Set(sources.map(\.label))) }

        let expected: [String: MonitorGap.Reason] = [
            "slow": .timeout, "garbage": .malformed, "huge": .tooLarge, "millions": .tooLarge, "many": .tooManySamples, "failing": .httpStatus,
            "unreachable": .unreachable,
        ]
        // The full intervals: each hostile source a gap — of its kind, or `late` when its scrape (or,
        // on a busy machine, its parse of a huge body) overran the interval, or, for the sources whose
        // answer is megabytes, `timeout` when a starved machine could not read up to the size cap within
        // the scrape's time limit (seen once in 60 scrapes at load 9) — never data; each one's own kind
        // at least once. The good endpoint and the process sampled every time.
        let bigBodies: Set<String> = ["huge", "millions"]
        for (label, reason) in expected {
            let gaps = intervals.dropLast().map { $0.sources[label]?.gap?.reason }
            #expect(
                gaps.allSatisfy { $0 == reason || $0 == .late || (bigBodies.contains(label) && $0 == .timeout) }, "\(label): \(gaps)")
            #expect(gaps.contains(reason), "\(label): \(gaps)")
        }
        for interval in intervals.dropLast() {
            let series = try #require(interval.sources["good"]?.series)
            #expect(series.gauges == ["sessions": 42])
            #expect(series.increases == ["requests_total": 5])
            #expect(interval.sources["self"]?.process?.pids == [getpid()])
        }
        // One warning per hostile source, none for the good ones.
        let warnings = monitor.takeWarnings()
        #expect(warnings.count == expected.count)
        for label in expected.keys { #expect(warnings.filter { $0.hasPrefix("monitor \(label): ") }.count == 1, "\(warnings)") }
        #expect(monitor.takeWarnings().isEmpty)
    }

    @Test func takeNeverWaitsForASlowSourceBeyondItsGrace() async throws {
        let slow = try TinyHTTPServer { _ in usleep(2_000_000) }
        defer { slow.stop() }
        let sources = [
            try MonitorSource.parse("slow=prometheus:http://127.0.0.1:\(slow.port)/metrics"), try MonitorSource.parse("self=process:\(getpid())"),
        ]
        var limits = ScrapeLimits()
        limits.timeout = 1.5
        let monitor = ServerMonitor(sources: sources, interval: .milliseconds(500), limits: limits)
        let origin = NIODeadline.now()
        monitor.start(origin: origin)
        // At 0.6 s the first interval's process sample is in, the slow scrape is not: nothing yet.
        try await Task.sleep(for: .milliseconds(600))
        let started = NIODeadline.now()
        #expect(monitor.take().isEmpty)
        #expect((NIODeadline.now() - started).nanoseconds < 50_000_000)
        // Past the end + grace (0.5 + 2.0 s), the interval comes with the slow source marked.
        try await Task.sleep(for: .milliseconds(2_000))
        let first = try #require(monitor.take().first)
        #expect(first.start == 0 && first.end == 0.5)
        #expect([MonitorGap.Reason.timeout, .late].contains(first.sources["slow"]?.gap?.reason))
        #expect(first.sources["self"]?.process != nil)
        _ = await monitor.finish()
    }
}
