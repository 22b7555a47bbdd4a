import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `xmppload compare` on real runs: the same seeded profile twice against one private Prosody, and
/// once through a `DelayProxy` that holds every server→client chunk back 20 ms. The twin runs must
/// compare as "no significant change" (exit 0); the slowed run as "regressed" on login and the login
/// phases that wait for the server (exit 3). The HTML comparison passes the headless-Chromium check.
@Suite(.serialized) struct CompareTests {
    /// Tolerances for a shared, busy 2-core machine: with one run per side the bootstrap over
    /// intervals cannot see run-to-run variation (another build may slow one run), so twin runs need
    /// room. 20 ms per server chunk adds far more than this to every login (several round trips).
    static let tolerances = [
        "--tolerance", "p50=50%", "--tolerance", "p90=100%", "--tolerance", "p99=200%",
        "--tolerance", "throughput=25%", "--tolerance", "error_rate=5pp", "--tolerance", "loss=5pp",
    ]

    static func run(port: Int, server: LocalServer, out: String, label: String) throws -> CommandLineTests.Result {
        try CommandLineTests.xmppload(
            [
                "run", "profiles/compare.yaml", "--server", "127.0.0.1:\(port)",
                "--domain", server.domain, "--accounts", "1-100", "--password", server.password,
                "--sessions", "100", "--ramp", "10s", "--duration", "20s", "--insecure",
                "--out", out, "--interval", "1s", "--plain", "--label", label, "--tag", "route=\(label)",
            ],
            timeout: 150)
    }

    /// Runs `compare`; when the only reasons for refusing are generator saturation (the machine is
    /// shared: another build may starve this one), judges anyway with --force and says so.
    static func compare(_ arguments: [String]) throws -> CommandLineTests.Result {
        let result = try CommandLineTests.xmppload(["compare"] + arguments + tolerances + ["--resamples", "500"], timeout: 180)
        guard result.status == 4 else { return result }
        let reasons = result.output.split(separator: "\n").filter { $0.hasPrefix("  - ") }
        #expect(!reasons.isEmpty && reasons.allSatisfy { $0.contains("saturated") }, "refused for other reasons:\n\(result.output)")
        return try CommandLineTests.xmppload(["compare"] + arguments + tolerances + ["--resamples", "500", "--force"], timeout: 180)
    }

    static func verdict(_ output: String, _ key: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(key + " ") }.map(String.init)
    }

    @Test(.timeLimit(.minutes(8)))
    func twinRunsShowNoChangeAndASlowedServerRegresses() throws {
        let server = try LocalServer.start(accounts: 100)
        defer { server.stop() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-compare-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let runA = base + "/a"
        let runB = base + "/b"
        let runSlow = base + "/slow"

        for (out, label) in [(runA, "direct-a"), (runB, "direct-b")] {
            let result = try Self.run(port: server.port, server: server, out: out, label: label)
            #expect(result.status == 0, "\(result.output)")
        }
        let proxy = try DelayProxy(upstreamPort: server.port, delay: .milliseconds(20))
        let slow = try Self.run(port: proxy.port, server: server, out: runSlow, label: "delayed")
        proxy.stop()
        #expect(slow.status == 0, "\(slow.output)")

        // The manifest records what was measured, and never the password.
        let manifest = try ResultsDirectory(path: runA).readManifest()
        #expect(manifest.label == "direct-a" && manifest.tags == ["route": "direct-a"])
        #expect(manifest.profiles.first?.text?.contains("name: compare") == true)
        #expect(manifest.plannedLoad?.phases.count == 1)
        #expect(manifest.appliedLoad?.sessionsStarted == 100)
        #expect(manifest.settings?.port == server.port)
        #expect(manifest.commandLine.contains("***") && !manifest.commandLine.contains(server.password))

        let twins = try Self.compare([runA, runB])
        #expect(twins.status == 0, "\(twins.output)")
        let twinLogin = Self.verdict(twins.output, "login.p50")
        #expect(twinLogin?.hasSuffix("no significant change") == true, "\(twins.output)")
        #expect(twins.output.contains("outcome: no regression"))

        let html = base + "/compare.html"
        let slowed = try Self.compare([runA, runSlow, "--html", html])
        #expect(slowed.status == 3, "\(slowed.output)")
        for key in ["login.p50", "login.tls.p50", "login.features.p50", "login.sasl.p50", "login.bind.p50"] {
            #expect(Self.verdict(slowed.output, key)?.hasSuffix("regressed") == true, "\(key):\n\(slowed.output)")
        }
        #expect(slowed.output.contains("outcome: regressed"))

        // The JSON names the same regressions.
        let json = try CommandLineTests.xmppload(
            ["compare", runA, runSlow, "--json", "--force", "--resamples", "500"] + Self.tolerances, timeout: 180)
        #expect(json.status == 3)
        let comparison = try JSONDecoder().decode(Comparison.self, from: Data(json.output.utf8))
        #expect(comparison.rows.first { $0.metric.key == "login.p50" }?.verdict == .regressed)

        // The HTML comparison renders in headless Chromium: charts with data, no errors, no network.
        let check = try ChildProcess.spawn(LocalServer.repositoryRoot.appendingPathComponent("scripts/check-html-report").path, [html])
        defer { check.removeLog() }
        #expect(check.wait(timeout: 240) == 0, "\(check.output)")
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
