import Foundation
import LoadResults
import Testing

/// `xmppload capacity` against a real Prosody behind a proxy of known capacity (`DelayProxy` with
/// an admission policy): admitting R new connections per second it finds R within ±15 %, and
/// against a proxy that falls over past a rate it stops within two collapsed steps. Steps are short
/// (2 s warm-up + 6 s judged) so the suite stays within a few minutes.
///
/// The rates checked are 25 and 70 logins/s (70 is the one that failed before steps waited for a
/// settled server); `XMPPLOAD_CAPACITY_RATES=25,40,70,100` checks others (`scripts/capacity-accuracy`
/// runs that list and prints the table docs/CAPACITY.md publishes).
@Suite(.serialized) struct CapacitySearchTests {
    static func profile() throws -> String {
        let path = VerdictCommandTests.temporaryPath("capacity-profile") + ".yaml"
        try """
        name: capacity-login
        steps: [login, logout]
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The proxy capacities the accuracy test checks: `XMPPLOAD_CAPACITY_RATES` (comma-separated), else 25 and 70.
    static let rates: [Double] = {
        let given = ProcessInfo.processInfo.environment["XMPPLOAD_CAPACITY_RATES"]?.split(separator: ",").compactMap { Double($0) } ?? []
        return given.isEmpty ? [25, 70] : given
    }()

    static func capacity(server: LocalServer, proxyPort: Int, out: String, extra: [String], timeout: Double = 170) throws -> CommandLineTests.Result {
        let profile = try profile()
        defer { try? FileManager.default.removeItem(atPath: profile) }
        return try CommandLineTests.xmppload(
            [
                "capacity", profile, "--server", "127.0.0.1:\(proxyPort)", "--domain", server.domain, "--accounts", "1-\(server.accounts)",
                "--password", server.password, "--insecure", "--step-duration", "6s", "--warmup", "2s", "--interval", "1s",
                "--resolution", "10%", "--out", out,
            ] + extra, timeout: timeout)
    }

    /// The `capacity` block of the search's summary.json.
    static func result(_ out: String) throws -> CapacityResult {
        try #require(CapacityResult.read(from: ResultsDirectory(path: out)), "no capacity block in \(out)/summary.json")
    }

    @Test(.timeLimit(.minutes(8)), arguments: Self.rates)
    func aProxyAdmittingRPerSecondHasCapacityR(rate: Double) async throws {
        let start = (rate / 4).rounded()
        try await LocalServer.with(accounts: max(300, Int(rate * 40))) { server in
            let proxy = try DelayProxy(upstreamPort: server.port, delay: .zero, admission: .wait(perSecond: rate))
            defer { proxy.stop() }
            let out = VerdictCommandTests.temporaryPath("capacity-\(Int(rate))")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let began = Date()
            let run = try Self.capacity(
                server: server, proxyPort: proxy.port, out: out,
                // Plain TCP: the proxy, not Prosody's CPU (TLS handshakes on one shared core), is to be
                // the limit; the monitor shows when it is not.
                extra: [
                    "--slo", "login.p99 < 300ms", "--start", String(start), "--max", String(rate * 4), "--monitor", server.processMonitor,
                    "--tls", "none",
                ], timeout: 420)
            #expect(run.status == 0, "\(run.output)")
            let result = try Self.result(out)
            #expect(result.kind == "found", "\(run.output)")
            let capacity = try #require(result.capacity, "\(run.output)")
            // One line per rate, for docs/CAPACITY.md (scripts/capacity-accuracy collects them).
            print(
                "capacity-accuracy: proxy \(CapacityStep.number(rate))/s found \(CapacityStep.number(capacity))/s (\(String(format: "%+.1f", (capacity - rate) / rate * 100)) %) in \(result.steps.count) steps, \(Int(Date().timeIntervalSince(began))) s; steps not settled: \(result.steps.filter { $0.start?.settled == false }.count)"
            )
            #expect(abs(capacity - rate) <= 0.15 * rate, "capacity \(capacity) for a proxy of \(rate)/s:\n\(run.output)")
            // Every step started on a settled server and says how it started; the steps' runs watched Prosody.
            #expect(result.steps.allSatisfy { $0.start != nil }, "\(run.output)")
            #expect(result.steps.allSatisfy { $0.start?.settled == true }, "\(run.output)")
            #expect(result.steps.allSatisfy { $0.limit != nil }, "\(run.output)")
            #expect(result.limitedBy == "login.p99 < 300ms")
            #expect(run.output.contains("capacity: \(CapacityStep.number(capacity)) logins/s — limited by login.p99"), "\(run.output)")
            // Every step has its own results and its intervals, tagged, in the search's intervals.jsonl.
            let lines = try String(contentsOfFile: out + "/intervals.jsonl", encoding: .utf8).split(separator: "\n")
            let tagged = Set(
                lines.compactMap { line -> Int? in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["step"] as? Int
                })
            #expect(tagged == Set(result.steps.map(\.index)))
            for step in result.steps {
                #expect(FileManager.default.fileExists(atPath: "\(out)/\(step.directory)/summary.json"))
            }
            let report = try CommandLineTests.xmppload(["report", out])
            #expect(report.status == 0, "\(report.output)")
            #expect(report.output.contains(result.headline), "\(report.output)")
            let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
            #expect(html.contains("Achieved against offered load"))
            #expect(html.contains("class=\"band\""))
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func aServerThatFallsOverPastARateStopsTheSearchWithinTwoCollapses() async throws {
        try await LocalServer.with(accounts: 300) { server in
            let proxy = try DelayProxy(upstreamPort: server.port, delay: .zero, admission: .refuseAbove(perSecond: 12))
            defer { proxy.stop() }
            let out = VerdictCommandTests.temporaryPath("capacity-collapse")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let run = try Self.capacity(
                server: server, proxyPort: proxy.port, out: out,
                extra: ["--slo", "login.p99 < 300ms", "--slo", "errors.rate < 1%", "--start", "5", "--max", "200", "--resolution", "2%"])
            #expect(run.status == 0, "\(run.output)")
            let result = try Self.result(out)
            let collapsed = result.steps.filter { $0.outcome == .collapse }
            #expect(!collapsed.isEmpty, "\(run.output)")
            #expect(collapsed.count <= 2, "\(run.output)")
            // The first collapse is never climbed past, and each collapsed step was cut short.
            let first = try #require(collapsed.first)
            #expect(result.steps.filter { $0.index > first.index }.allSatisfy { $0.asked < first.asked })
            #expect(collapsed.allSatisfy { $0.cutShort && $0.judgedSeconds < 6 }, "\(run.output)")
            #expect(run.output.contains("collapse: "), "\(run.output)")
            // The search ended within two steps of the last collapse (a bisect step and the repeat, at most).
            let last = try #require(collapsed.last)
            #expect(result.steps.count - last.index <= 2, "\(run.output)")
            let capacity = try #require(result.capacity)
            #expect(capacity <= 12, "\(run.output)")
            #expect(proxy.refused > 0)
        }
    }

    /// Two generators (`--segment 0/2`, `1/2`, one `--start-at`) climb one ladder (×1.5 from 8/s)
    /// against a proxy admitting 16/s in all; each judges its share, and `report` on both directories
    /// merges every step and finds the knee on the run's figures: 12/s (18/s fails).
    @Test(.timeLimit(.minutes(4)))
    func twoGeneratorsClimbOneLadderAndReportMergesTheirSteps() async throws {
        try await LocalServer.with(accounts: 300) { server in
            let proxy = try DelayProxy(upstreamPort: server.port, delay: .zero, admission: .wait(perSecond: 16))
            defer { proxy.stop() }
            let profile = try Self.profile()
            defer { try? FileManager.default.removeItem(atPath: profile) }
            let base = VerdictCommandTests.temporaryPath("capacity-ladder")
            defer { try? FileManager.default.removeItem(atPath: base) }
            let formatter = ISO8601DateFormatter()
            let startAt = formatter.string(from: Date().addingTimeInterval(6))
            let generators = try (0..<2).map { index in
                try ChildProcess.spawn(
                    CommandLineTests.binary,
                    [
                        "capacity", profile, "--server", "127.0.0.1:\(proxy.port)", "--domain", server.domain, "--accounts", "1-300",
                        "--password", server.password, "--insecure", "--step-duration", "6s", "--warmup", "2s", "--interval", "1s",
                        "--slo", "login.p99 < 300ms", "--start", "8", "--max", "40", "--ladder-ratio", "1.5",
                        "--segment", "\(index)/2", "--start-at", startAt, "--out", "\(base)/gen-\(index)",
                    ])
            }
            defer { generators.forEach { $0.removeLog() } }
            let statuses = generators.map { $0.wait(timeout: 200) }
            for (generator, status) in zip(generators, statuses) {
                #expect(status == 0, "\(generator.output)")
                #expect(generator.output.contains("segment "), "each table says it judges its share:\n\(generator.output)")
            }
            let local = try (0..<2).map { try Self.result("\(base)/gen-\($0)") }
            // One ladder: the same loads, asked at the same times, climbed only (no bisect, no repeat).
            #expect(local[0].steps.map(\.asked).prefix(3) == [8, 12, 18], "\(local[0].steps.map(\.asked))")
            #expect(local.allSatisfy { $0.steps.allSatisfy { $0.purpose == .climb } })

            let report = try CommandLineTests.xmppload(["report", "\(base)/gen-0", "\(base)/gen-1", "--html", "\(base)/merged.html"])
            #expect(report.status == 0, "\(report.output)")
            #expect(report.output.contains("merged from 2 generators"), "\(report.output)")
            let merged = try CommandLineTests.xmppload(["report", "\(base)/gen-0", "\(base)/gen-1", "--json", "--html", "\(base)/merged.html"])
            let data = try #require(merged.output.data(using: .utf8))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let capacity = try #require(object["capacity"] as? [String: Any])
            #expect(capacity["kind"] as? String == "found", "\(report.output)")
            #expect(capacity["capacity"] as? Double == 12, "\(report.output)")
            // The merged steps carry the whole run's load: both generators' shares added up.
            let steps = try #require(capacity["steps"] as? [[String: Any]])
            let firstAchieved = try #require(steps.first?["achieved"] as? Double)
            #expect(abs(firstAchieved - 8) <= 1.5, "merged step 1 achieved \(firstAchieved)/s of 8/s:\n\(report.output)")
            #expect(FileManager.default.fileExists(atPath: "\(base)/merged.html"))
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aTypoInARuleIsAUsageErrorWithADidYouMean() throws {
        let profile = try Self.profile()
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let run = try CommandLineTests.xmppload([
            "capacity", profile, "--slo", "logn.p99 < 300ms", "--server", "127.0.0.1:5222", "--domain", "load.test",
            "--accounts", "1-10", "--password", "x",
        ])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("unknown metric 'logn'"), "\(run.output)")
        #expect(run.output.contains("did you mean 'login'?"), "\(run.output)")
    }
}
