import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `xmppload ab` and `xmppload compare` on real runs against one private Prosody, directly and
/// through a `DelayProxy` that holds every server→client chunk back 15 ms:
/// - `ab` against the same server twice (3 rounds) → exit 0; against the server directly and
///   through the proxy → exit 3 (login and the login phases that wait for the server regressed);
/// - `compare` of three direct runs against three direct runs → exit 0, of three direct runs against
///   three delayed ones → exit 3 (the rounds' directories are the runs);
/// - one run per side → exit 0 with the changes shown and "no verdict", even for the delayed one.
/// Every run is short (30 sessions, 4 s of load); the HTML comparison passes the headless-Chromium check.
@Suite(.serialized) struct CompareTests {
    /// Tolerances for a shared, busy 2-core machine (other builds run beside the tests): runs of
    /// 30 sessions are noisy. 15 ms per server chunk adds far more than this to every login
    /// (several round trips: ~100 ms on a ~20 ms login).
    static let tolerances = [
        "--tolerance", "p50=50%", "--tolerance", "p90=100%", "--tolerance", "p99=200%",
        "--tolerance", "throughput=25%", "--tolerance", "error_rate=5pp", "--tolerance", "loss=5pp",
    ]

    /// The run flags of every run: a few seconds of load, 30 sessions.
    static func runFlags(_ server: LocalServer) -> [String] {
        [
            "--domain", server.domain, "--accounts", "1-30", "--sessions", "30", "--ramp", "2s", "--duration", "4s",
            "--message-grace", "1s", "--interval", "1s", "--insecure", "--plain",
        ]
    }

    /// Runs `ab` (3 rounds); when it refuses only because the generator saturated (the machine is
    /// shared), judges the same rounds with `compare --paired --force` and says so.
    static func ab(
        baseline: Int, candidate: Int, server: LocalServer, out: String, password: [String], extra: [String] = []
    ) throws
        -> CommandLineTests.Result
    {
        let result = try CommandLineTests.xmppload(
            [
                "ab", "profiles/compare.yaml", "--baseline-server", "127.0.0.1:\(baseline)", "--candidate-server", "127.0.0.1:\(candidate)",
                "--rounds", "3", "--out", out, "--resamples", "500",
            ] + runFlags(server) + password + tolerances + extra,
            timeout: 240)
        guard result.status == 4 else { return result }
        let rounds = ["--baseline"] + (1...3).map { "\(out)/round-\($0)-baseline" } + ["--candidate"] + (1...3).map { "\(out)/round-\($0)-candidate" }
        return try compare(["--paired"] + rounds, refused: result)
    }

    /// Runs `compare`; when the only reasons for refusing are generator saturation, judges anyway
    /// with --force.
    static func compare(_ arguments: [String], refused: CommandLineTests.Result? = nil) throws -> CommandLineTests.Result {
        let result = try refused ?? CommandLineTests.xmppload(["compare"] + arguments + tolerances + ["--resamples", "500"], timeout: 180)
        guard result.status == 4 else { return result }
        let reasons = result.output.split(separator: "\n").filter { $0.hasPrefix("  - ") }
        #expect(!reasons.isEmpty && reasons.allSatisfy { $0.contains("saturated") }, "refused for other reasons:\n\(result.output)")
        return try CommandLineTests.xmppload(["compare"] + arguments + tolerances + ["--resamples", "500", "--force"], timeout: 180)
    }

    static func verdict(_ output: String, _ key: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(key + " ") }.map(String.init)
    }

    static func sides(_ directory: String, _ side: String) -> [String] {
        (1...3).map { "\(directory)/round-\($0)-\(side)" }
    }

    @Test(.timeLimit(.minutes(10)))
    func abAndRepeatedRunsSeeA15msDelayAndNothingInTwins() throws {
        let server = try LocalServer.start(accounts: 30)
        defer { server.stop() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-compare-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let passwordFile = base + "/password"
        try Data((server.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))

        // One server twice: no regression. The password reaches the runs through the environment.
        let twins = try Self.ab(
            baseline: server.port, candidate: server.port, server: server, out: base + "/twins", password: ["--password", server.password])
        #expect(twins.status == 0, "\(twins.output)")
        #expect(twins.output.contains("paired bootstrap over rounds (3 vs 3 rounds)"), "\(twins.output)")
        #expect(twins.output.contains("outcome: no regression"), "\(twins.output)")
        // Interleaved: round 1 baseline first, round 2 candidate first, round 3 baseline first.
        let starts = try ["baseline", "candidate"].flatMap { side in
            try Self.sides(base + "/twins", side).map { (try ResultsDirectory(path: $0).readManifest().startedAt, side.prefix(1)) }
        }
        #expect(starts.sorted { $0.0 < $1.0 }.map(\.1).joined() == "bccbbc", "\(starts)")
        let manifest = try ResultsDirectory(path: base + "/twins/round-2-candidate").readManifest()
        #expect(manifest.label == "candidate" && manifest.tags == ["ab-round": "2", "ab-side": "candidate"])
        #expect(!manifest.commandLine.joined(separator: " ").contains(server.password), "\(manifest.commandLine)")
        #expect(FileManager.default.fileExists(atPath: base + "/twins/ab.json"))

        // Directly vs through the proxy: regressed.
        let proxy = try DelayProxy(upstreamPort: server.port, delay: .milliseconds(15))
        let html = base + "/ab.html"
        let slowed = try Self.ab(
            baseline: server.port, candidate: proxy.port, server: server, out: base + "/slowed", password: ["--password-file", passwordFile],
            extra: ["--html", html])
        proxy.stop()
        #expect(slowed.status == 3, "\(slowed.output)")
        for key in ["login.p50", "login.tls.p50", "login.sasl.p50"] {
            #expect(Self.verdict(slowed.output, key)?.hasSuffix("regressed") == true, "\(key):\n\(slowed.output)")
        }

        // The same runs as repeated runs, unpaired: three direct vs three direct, three direct vs three delayed.
        let repeatedTwins = try Self.compare(
            ["--baseline"] + Self.sides(base + "/twins", "baseline") + ["--candidate"] + Self.sides(base + "/twins", "candidate"))
        #expect(repeatedTwins.status == 0, "\(repeatedTwins.output)")
        #expect(repeatedTwins.output.contains("bootstrap over runs (3 vs 3 runs)") && repeatedTwins.output.contains("outcome: no regression"))
        let repeatedSlowed = try Self.compare(
            ["--baseline"] + Self.sides(base + "/slowed", "baseline") + ["--candidate"] + Self.sides(base + "/slowed", "candidate") + ["--json"])
        #expect(repeatedSlowed.status == 3, "\(repeatedSlowed.output)")
        let comparison = try JSONDecoder().decode(Comparison.self, from: Data(repeatedSlowed.output.utf8))
        #expect(comparison.method == .runs)
        #expect(comparison.rows.first { $0.metric.key == "login.p50" }?.verdict == .regressed)
        #expect(comparison.rows.allSatisfy { !$0.ofRecordings })

        // One run per side cannot see run-to-run variation: changes shown, no verdict, exit 0.
        let single = try Self.compare([base + "/slowed/round-1-baseline", base + "/slowed/round-1-candidate"])
        #expect(single.status == 0, "\(single.output)")
        #expect(Self.verdict(single.output, "login.p50")?.contains("not judged (within runs:") == true, "\(single.output)")
        #expect(single.output.contains("outcome: no verdict — one run per side cannot see run-to-run variation"), "\(single.output)")

        // The HTML comparison renders in headless Chromium: charts with data, no errors, no network.
        let check = try ChildProcess.spawn(LocalServer.repositoryRoot.appendingPathComponent("scripts/check-html-report").path, [html])
        defer { check.removeLog() }
        #expect(check.wait(timeout: 240) == 0, "\(check.output)")
    }
}

/// `ab`'s usage errors exit 2 before any run: missing servers, flags ab sets itself.
@Suite struct AbUsageTests {
    @Test func usageErrorsExitTwoListingEveryProblem() throws {
        let result = try CommandLineTests.xmppload(
            ["ab", "profiles/compare.yaml", "--rounds", "0", "--out", "/tmp/xmppload-ab-never", "--server", "127.0.0.1:1", "--tolerance", "p95=1%"],
            timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        for text in ["--baseline-server", "--candidate-server", "--rounds must be at least 1", "--server is set by ab", "unknown metric 'p95'"] {
            #expect(result.output.contains(text), "\(text):\n\(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/xmppload-ab-never"))
    }
}

/// `compare`'s usage errors exit 2 with every problem listed, before reading any run.
@Suite struct CompareUsageTests {
    @Test func usageErrorsExitTwoListingEveryProblem() throws {
        let fixture = LocalServer.repositoryRoot.appendingPathComponent("Tests/LoadResultsTests/Fixtures/chat-run").path
        let result = try CommandLineTests.xmppload(["compare", fixture, "--tolerance", "p95=5%", "--tolerance", "p99=lots"], timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("exactly two directories") || result.output.contains("BASELINE CANDIDATE"), "\(result.output)")
        #expect(result.output.contains("unknown metric 'p95'") && result.output.contains("'lots' is not a non-negative number"), "\(result.output)")
        let missing = try CommandLineTests.xmppload(["compare", fixture, "/nonexistent/xmppload-run"], timeout: 60)
        #expect(missing.status == 2 && missing.output.contains("not a results directory"), "\(missing.output)")
    }

    @Test func badTagsAreUsageErrorsListedWithTheOthers() throws {
        let result = try CommandLineTests.xmppload(
            [
                "run", "profiles/login.yaml", "--domain", "load.test", "--sessions", "5",
                "--tag", "no-equals", "--tag", "build=1", "--tag", "build=2", "--tls", "sometimes",
            ], timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("--tag must be key=value (key: letters, digits, . _ -), got 'no-equals'"), "\(result.output)")
        #expect(result.output.contains("--tag build given twice"), "\(result.output)")
        #expect(result.output.contains("--tls must be starttls, direct or none"), "\(result.output)")
    }
}

/// The proxy the comparison relies on: bytes pass both ways, server→client chunks arrive no earlier
/// than the delay, and `cutAll()` ends every open connection.
@Suite struct DelayProxyTests {
    /// A loopback socket: listening on a free port, or connected to `port`.
    static func loopbackSocket(connectTo port: UInt16? = nil) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = (port ?? 0).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                if port != nil {
                    _ = connect(fd, address, length)
                } else {
                    _ = bind(fd, address, length)
                    _ = listen(fd, 8)
                    _ = getsockname(fd, address, &length)
                }
            }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    @Test(.timeLimit(.minutes(1)))
    func forwardsBothWaysDelaysServerChunksAndCutsConnections() throws {
        let upstream = Self.loopbackSocket()
        defer { close(upstream.fd) }
        let proxy = try DelayProxy(upstreamPort: Int(upstream.port), delay: .milliseconds(50))
        defer { proxy.stop() }
        let client = Self.loopbackSocket(connectTo: UInt16(proxy.port))
        defer { close(client.fd) }
        let server = accept(upstream.fd, nil, nil)
        defer { close(server) }
        #expect(server >= 0)

        var buffer = [UInt8](repeating: 0, count: 64)
        // client → server passes.
        #expect(send(client.fd, "ping", 4, Int32(MSG_NOSIGNAL)) == 4)
        #expect(buffer.withUnsafeMutableBytes { recv(server, $0.baseAddress, $0.count, 0) } == 4)
        // server → client arrives, and not before the delay.
        let sent = ContinuousClock.now
        #expect(send(server, "pong", 4, Int32(MSG_NOSIGNAL)) == 4)
        #expect(buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) } == 4)
        #expect(ContinuousClock.now - sent >= .milliseconds(50))
        #expect(String(decoding: buffer.prefix(4), as: UTF8.self) == "pong")
        // cutAll ends the connection on both sides.
        proxy.cutAll()
        #expect(buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) } == 0)
        #expect(buffer.withUnsafeMutableBytes { recv(server, $0.baseAddress, $0.count, 0) } == 0)
    }
}
