import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The metrics endpoint as a real Prometheus sees it: Debian's `prometheus` (scripts/install-deps)
/// started by the test on loopback with its own config and data directory, stopped by PID; and the
/// Grafana dashboard's queries name only metrics that endpoint serves.
@Suite(.serialized) struct PrometheusScrapeTests {
    static let prometheusBinary = "/usr/bin/prometheus"
    static let dashboard = LocalServer.repositoryRoot.appendingPathComponent("deploy/grafana/xmppload.json")

    /// Metrics a dashboard panel may query that a short clean run does not serve, each with why.
    static let appearOnlyWhenUsed: [String: String] = [
        // A counter per error kind, created when the first error is counted; a clean run has none.
        "xmppload_errors_total": "created with the first error"
    ]

    /// A blocking HTTP/1.0 GET on 127.0.0.1; returns (status code, body).
    static func get(port: Int, path: String) throws -> (Int, String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ChildProcessError(message: "connect to 127.0.0.1:\(port) failed") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = parts.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// `/api/v1/query`: the result vector as (labels, value).
    static func query(port: Int, _ promQL: String) throws -> [([String: String], Double)] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: allowed)!
        let (status, body) = try get(port: port, path: "/api/v1/query?query=\(encoded)")
        guard status == 200, let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else {
            throw ChildProcessError(message: "query \(promQL) failed: \(status) \(body)")
        }
        return result.compactMap { sample in
            guard let labels = sample["metric"] as? [String: String], let value = sample["value"] as? [Any],
                value.count == 2, let text = value[1] as? String, let number = Double(text)
            else { return nil }
            return (labels, number)
        }
    }

    /// Every `xmppload_…` metric name in every PromQL expression of the dashboard, by panel title.
    static func dashboardMetrics() throws -> [(panel: String, expression: String, metrics: [String])] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: dashboard)) as? [String: Any]
        let panels = json?["panels"] as? [[String: Any]] ?? []
        let pattern = try NSRegularExpression(pattern: "xmppload_[a-zA-Z0-9_]+")
        var found: [(String, String, [String])] = []
        for panel in panels {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                guard let expression = target["expr"] as? String else { continue }
                let range = NSRange(expression.startIndex..., in: expression)
                let names = pattern.matches(in: expression, range: range).map { String(expression[Range($0.range, in: expression)!]) }
                found.append((panel["title"] as? String ?? "?", expression, names))
            }
        }
        return found
    }

    @Test func theDashboardHasAPanelForEveryConcern() throws {
        let queries = try Self.dashboardMetrics()
        #expect(queries.allSatisfy { !$0.metrics.isEmpty }, "a query names no xmppload metric")
        let all = Set(queries.flatMap(\.metrics))
        for metric in [
            "xmppload_sessions_online", "xmppload_sessions_connecting", "xmppload_sessions_live",
            "xmppload_sessions_logged_in_total", "xmppload_messages_received_total", "xmppload_latency_seconds",
            "xmppload_errors_total", "xmppload_sessions_reconnects_total", "xmppload_generator_cpu_percent",
            "xmppload_generator_rss_bytes", "xmppload_generator_open_fds", "xmppload_generator_loop_lag_p99_seconds",
            "xmppload_generator_saturated", "xmppload_server_cpu_percent", "xmppload_server_rss_bytes", "xmppload_server_open_fds",
            "xmppload_server_run_queue_wait_percent", "xmppload_server_up",
        ] {
            #expect(all.contains(metric), "no panel queries \(metric)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aRealPrometheusScrapesTheRunAndServesEveryDashboardMetric() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.prometheusBinary) else {
            Issue.record("\(Self.prometheusBinary) is missing: run scripts/install-deps")
            return
        }
        let directory = VerdictCommandTests.temporaryPath("prometheus")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let metricsPort = try VerdictCommandTests.unusedPort()
        let webPort = try VerdictCommandTests.unusedPort()
        try """
        global:
          scrape_interval: 1s
          scrape_timeout: 1s
        scrape_configs:
          - job_name: xmppload
            static_configs:
              - targets: ['127.0.0.1:\(metricsPort)']
        """.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        let prometheus = try ChildProcess.spawn(
            Self.prometheusBinary,
            [
                "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                "--web.listen-address=127.0.0.1:\(webPort)", "--log.level=warn",
            ])
        defer {
            kill(prometheus.pid, SIGTERM)
            _ = prometheus.wait(timeout: 30)
            prometheus.removeLog()
        }
        let readySince = Date()
        while (try? Self.get(port: webPort, path: "/-/ready").0) != 200 {
            guard Date().timeIntervalSince(readySince) < 60 else {
                Issue.record("prometheus did not become ready:\n\(prometheus.output)")
                return
            }
            usleep(200_000)
        }

        let server = try LocalServer.start(accounts: 20)
        defer { server.stop() }
        let out = directory + "/run"
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.path + "/profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-20", "--password", server.password, "--sessions", "20",
                "--ramp", "2s", "--duration", "20s", "--insecure", "--interval", "1s", "--metrics-port", "\(metricsPort)",
                "--monitor", server.processMonitor, "--out", out,
            ])
        defer { run.removeLog() }

        // While the run goes: Prometheus has scraped all 20 sessions online and the run's login p99.
        var online: Double?
        var loginP99: Double?
        let since = Date()
        while Date().timeIntervalSince(since) < 60, online != 20 || loginP99 == nil {
            online = try Self.query(port: webPort, "xmppload_sessions_online").first?.1
            loginP99 = try Self.query(port: webPort, #"xmppload_latency_seconds{metric="login",quantile="0.99",window="run"}"#).first?.1
            usleep(500_000)
        }
        #expect(online == 20, "sessions online as scraped: \(String(describing: online))")
        let status = run.wait(timeout: 120)
        #expect(status == 0, "\(run.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        let maxLogin = try #require(summary.latencyMilliseconds["login"]?.max)
        let p99 = try #require(loginP99)
        #expect(p99 > 0 && p99 <= maxLogin / 1000 + 0.001, "scraped login p99 \(p99) s, run's max \(maxLogin) ms")

        // Every metric the dashboard queries was scraped from this run (or is on the short list above).
        let (namesStatus, namesBody) = try Self.get(port: webPort, path: "/api/v1/label/__name__/values")
        #expect(namesStatus == 200)
        let names = Set(((try JSONSerialization.jsonObject(with: Data(namesBody.utf8)) as? [String: Any])?["data"] as? [String]) ?? [])
        #expect(names.contains("xmppload_sessions_logged_in_total"), "\(names.sorted())")
        for query in try Self.dashboardMetrics() {
            for metric in query.metrics where Self.appearOnlyWhenUsed[metric] == nil {
                let served = names.contains(metric)
                #expect(served, "panel '\(query.panel)' queries \(metric), which the endpoint did not serve")
            }
        }
    }
}
