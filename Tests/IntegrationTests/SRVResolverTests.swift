import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// DNS SRV discovery against a real resolver: Debian's dnsmasq, started by the test on a free UDP
/// port of 127.0.0.1 with its own records and no upstream, stopped by PID. Skipped (with a note) when
/// dnsmasq is not installed (scripts/install-deps --dnsmasq).
@Suite(.serialized) struct SRVResolverTests {
    static let dnsmasqPath = "/usr/sbin/dnsmasq"
    static var dnsmasqInstalled: Bool { FileManager.default.isExecutableFile(atPath: dnsmasqPath) }

    /// A private dnsmasq: two cluster nodes weighted 3:1 at priority 0, a backup at priority 10,
    /// `plain.test` with an address but no SRV records, `none.test` whose SRV target is ".".
    struct DNSServer {
        let port: Int
        let process: ChildProcess

        static let clusterRecords = [
            "--local=/load.test/", "--local=/plain.test/", "--local=/none.test/",
            "--srv-host=_xmpp-client._tcp.load.test,node1.load.test,5222,0,30",
            "--srv-host=_xmpp-client._tcp.load.test,node2.load.test,5322,0,10",
            "--srv-host=_xmpp-client._tcp.load.test,backup.load.test,5422,10,5",
            "--srv-host=_xmpps-client._tcp.load.test,node1.load.test,5223,0,1",
            "--host-record=node1.load.test,127.0.0.2", "--host-record=node2.load.test,127.0.0.3",
            "--host-record=backup.load.test,127.0.0.4", "--host-record=plain.test,127.0.0.5",
            "--srv-host=_xmpp-client._tcp.none.test",
        ]

        static func start(records: [String] = clusterRecords) async throws -> DNSServer {
            let port = try freeUDPPort()
            let process = try ChildProcess.spawn(
                dnsmasqPath,
                [
                    "--no-daemon", "--port", String(port), "--listen-address", "127.0.0.1", "--bind-interfaces",
                    "--no-resolv", "--no-hosts", "--conf-file=/dev/null", "--pid-file=", "--user=root",
                ] + records)
            // dnsmasq answers once it has bound the port; poll with a real query (any answer will do,
            // a refusal included).
            let resolver = try SRVResolver(dns: "127.0.0.1:\(port)", timeout: .milliseconds(300))
            func answers() async -> Bool {
                do {
                    _ = try await resolver.query(name: "probe.test", type: .a)
                    return true
                } catch {
                    if case .serverFailure = error.reason { return true }
                    return false
                }
            }
            let started = ContinuousClock.now
            while await !answers() {
                guard ContinuousClock.now - started < .seconds(40) else {
                    kill(process.pid, SIGKILL)
                    _ = process.wait(timeout: 5)
                    throw LocalServerError(message: "dnsmasq did not answer on 127.0.0.1:\(port) within 40 s:\n\(process.output)")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            return DNSServer(port: port, process: process)
        }

        func stop() {
            // TERM, then KILL after 2 s (the test runner's blocked signals are inherited by the child).
            kill(process.pid, SIGTERM)
            _ = process.wait(timeout: 2)
            process.removeLog()
        }
    }

    static func freeUDPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw LocalServerError(message: "no free UDP port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(.enabled(if: dnsmasqInstalled, "dnsmasq is not installed: scripts/install-deps --dnsmasq"), .timeLimit(.minutes(2)))
    func resolvesTheClusterAndSpreadsByWeight() async throws {
        let server = try await DNSServer.start()
        defer { server.stop() }
        let endpoints = try await resolveEndpoints(domain: "load.test", directTLS: false, dns: "127.0.0.1:\(server.port)")
        #expect(
            Set(endpoints) == [
                WeightedEndpoint(host: "127.0.0.2", port: 5222, weight: 30, priority: 0),
                WeightedEndpoint(host: "127.0.0.3", port: 5322, weight: 10, priority: 0),
                WeightedEndpoint(host: "127.0.0.4", port: 5422, weight: 5, priority: 10),
            ])
        // The deterministic spread: exactly 3:1 over whole cycles; the backup gets nothing.
        let spread = try #require(WeightedEndpoints(endpoints))
        var counts: [String: Int] = [:]
        for arrival in 0..<4000 { counts[spread.endpoint(forArrival: arrival).host, default: 0] += 1 }
        #expect(counts == ["127.0.0.2": 3000, "127.0.0.3": 1000])
        // A client's RFC 2782 choice (seeded): node1 first about 3 times in 4.
        let records = endpoints.map { SRVRecord(priority: UInt16($0.priority), weight: UInt16($0.weight), port: UInt16($0.port), target: $0.host) }
        var generator = SeededGenerator(seed: 5)
        var node1First = 0
        for _ in 0..<2000 where SRVSelection.order(records, using: &generator)[0].target == "127.0.0.2" { node1First += 1 }
        #expect((1400...1600).contains(node1First), "\(node1First) of 2000")

        let direct = try await resolveEndpoints(domain: "load.test", directTLS: true, dns: "127.0.0.1:\(server.port)")
        #expect(direct == [WeightedEndpoint(host: "127.0.0.2", port: 5223, weight: 1, priority: 0)])

        // `run` with no server spreads its sessions over the two preferred nodes DNS names (nothing
        // listens on them here: every session is refused at its node, falls back to the other
        // preferred node, then to the backup, and counts one connect-refused when all three refused).
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-srv-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try CommandLineTests.xmppload([
            "run", "profiles/login.yaml", "--domain", "load.test", "--password", "unused", "--sessions", "4",
            "--dns", "127.0.0.1:\(server.port)", "--plain", "--out", out,
        ])
        #expect(run.status != 2, "\(run.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.errors == ["connect-refused": 4], "\(summary.errors)")
        let intervals = try ResultsDirectory(path: out).readIntervals()
        #expect(intervals.reduce(0) { $0 + $1.counter(.endpointFallbacks) } == 8)
        #expect(intervals.reduce(0) { $0 + $1.counter(.connectionsTCP) } == 12)
    }

    /// RFC 2782 fallback end to end: DNS names a priority-0 target that refuses connections (a
    /// socket bound on 127.0.0.9 that does not listen) and a priority-10 target, a private Prosody on
    /// 127.0.0.1. Every session is refused first, falls back within its login attempt and logs in
    /// through the second target; no error is counted, the fallbacks are.
    @Test(.enabled(if: dnsmasqInstalled, "dnsmasq is not installed: scripts/install-deps --dnsmasq"), .timeLimit(.minutes(2)))
    func sessionsFallBackToTheNextPriorityWhenTheFirstRefuses() async throws {
        let refusing = try BoundSocket(address: "127.0.0.9")
        defer { refusing.close() }
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let dns = try await DNSServer.start(records: [
            "--local=/\(server.domain)/",
            "--srv-host=_xmpp-client._tcp.\(server.domain),down.\(server.domain),\(refusing.port),0,1",
            "--srv-host=_xmpp-client._tcp.\(server.domain),up.\(server.domain),\(server.port),10,1",
            "--host-record=down.\(server.domain),127.0.0.9", "--host-record=up.\(server.domain),127.0.0.1",
        ])
        defer { dns.stop() }
        let endpoints = try await resolveEndpoints(domain: server.domain, directTLS: false, dns: "127.0.0.1:\(dns.port)")
        #expect(
            endpoints == [
                WeightedEndpoint(host: "127.0.0.9", port: refusing.port, weight: 1, priority: 0),
                WeightedEndpoint(host: "127.0.0.1", port: server.port, weight: 1, priority: 10),
            ])
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-srv-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload([
            "run", "profiles/login.yaml", "--domain", server.domain, "--dns", "127.0.0.1:\(dns.port)",
            "--password", server.password, "--accounts", "1-10", "--sessions", "10", "--insecure", "--plain", "--out", out,
        ])
        #expect(result.status == 0, "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.sessions.loggedIn == 10 && summary.sessions.failed == 0, "\(result.output)")
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        let intervals = try ResultsDirectory(path: out).readIntervals()
        #expect(intervals.reduce(0) { $0 + $1.counter(.endpointFallbacks) } == 10)
        #expect(intervals.reduce(0) { $0 + $1.counter(.connectionsTCP) } == 20)
    }

    @Test(.enabled(if: dnsmasqInstalled, "dnsmasq is not installed: scripts/install-deps --dnsmasq"), .timeLimit(.minutes(2)))
    func fallsBackToTheDomainAndReportsNoService() async throws {
        let server = try await DNSServer.start()
        defer { server.stop() }
        let dns = "127.0.0.1:\(server.port)"
        #expect(try await resolveEndpoints(domain: "plain.test", directTLS: false, dns: dns) == [WeightedEndpoint(host: "127.0.0.5", port: 5222)])
        #expect(try await resolveEndpoints(domain: "plain.test", directTLS: true, dns: dns) == [WeightedEndpoint(host: "127.0.0.5", port: 5223)])
        await #expect {
            _ = try await resolveEndpoints(domain: "none.test", directTLS: false, dns: dns)
        } throws: { error in
            guard let error = error as? SRVResolverError, case .noService = error.reason else { return false }
            return true
        }
        await #expect {
            _ = try await resolveEndpoints(domain: "missing.load.test", directTLS: false, dns: dns)
        } throws: { error in
            guard let error = error as? SRVResolverError, case .noAddress = error.reason else { return false }
            return true
        }
    }

    /// A resolver that never answers: a typed timeout, not a hang.
    @Test(.timeLimit(.minutes(1)))
    func aSilentResolverTimesOut() async throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        let resolver = try SRVResolver(dns: "127.0.0.1:\(UInt16(bigEndian: address.sin_port))", timeout: .milliseconds(400))
        await #expect {
            _ = try await resolver.resolveEndpoints(domain: "load.test", directTLS: false)
        } throws: { error in
            guard let error = error as? SRVResolverError, case .timeout = error.reason else { return false }
            return true
        }
        #expect(throws: SRVResolverError.self) { try SRVResolver(dns: "resolver.example:53") }
    }

    /// `run` with no server anywhere asks DNS: the SRV record of the domain leads to a private Prosody.
    @Test(.enabled(if: dnsmasqInstalled, "dnsmasq is not installed: scripts/install-deps --dnsmasq"), .timeLimit(.minutes(2)))
    func aRunWithoutServerFindsItThroughSRV() async throws {
        let server = try LocalServer.start(accounts: 5)
        defer { server.stop() }
        let dns = try await DNSServer.start(records: [
            "--local=/\(server.domain)/",
            "--srv-host=_xmpp-client._tcp.\(server.domain),xmpp.\(server.domain),\(server.port),0,1",
            "--host-record=xmpp.\(server.domain),127.0.0.1",
        ])
        defer { dns.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-srv-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload([
            "run", "profiles/login.yaml", "--domain", server.domain, "--dns", "127.0.0.1:\(dns.port)",
            "--password", server.password, "--accounts", "1-5", "--sessions", "5", "--insecure", "--plain", "--out", out,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("127.0.0.1:\(server.port)"), "\(result.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.sessions.loggedIn == 5 && summary.sessions.failed == 0)
    }
}

/// A TCP socket bound to `address` on a free port that never listens: connects to it are refused
/// (RST) for as long as it is open, and nothing else can take the port. Closed by `close()`.
struct BoundSocket {
    let fd: Int32
    /// The bound port.
    let port: Int

    init(address: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr.s_addr = inet_addr(address)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { Glibc.close(fd) }
            throw LocalServerError(message: "could not bind a TCP socket on \(address)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: socketAddress.sin_port))
    }

    func close() { _ = Glibc.close(fd) }
}
