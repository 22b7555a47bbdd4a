import Foundation

/// A private Prosody for one test: started with scripts/local-server in its own temporary directory
/// on a free loopback port, stopped by PID when the test ends (`stop()` in a `defer`, so also when it
/// fails). Tests that need one call `LocalServer.with(accounts:) { server in … }`.
struct LocalServer: Sendable {
    let host: String
    let port: Int
    let domain: String
    let password: String
    let accounts: Int
    let directory: String
    /// RFC 7395 WebSocket endpoint (`ws://127.0.0.1:P/xmpp-websocket`), from `XMPPLOAD_WS_URL`.
    let webSocketURL: String
    /// XEP-0206 BOSH endpoint (`http://127.0.0.1:P/http-bind`), from `XMPPLOAD_BOSH_URL`.
    let boshURL: String
    /// The WebSocket endpoint over TLS (`wss://127.0.0.1:P/xmpp-websocket`, self-signed certificate),
    /// from `XMPPLOAD_WSS_URL`.
    let secureWebSocketURL: String
    /// The BOSH endpoint over TLS (`https://127.0.0.1:P/http-bind`, self-signed certificate), from
    /// `XMPPLOAD_BOSH_HTTPS_URL`.
    let secureBOSHURL: String
    /// The Prosody process's id (`XMPPLOAD_PID`), for `--monitor process:PID`.
    var pid: Int32? = nil
    /// `mod_http_openmetrics`'s URL (`XMPPLOAD_OPENMETRICS_URL`, with `up --openmetrics`), else nil.
    var openMetricsURL: String? = nil
    /// `--monitor` for this server's process: `prosody=process:PID`.
    var processMonitor: String { "prosody=process:\(pid ?? 0)" }
    /// The server's self-signed certificate (PEM), made by `up` in the server's directory.
    var certificatePath: String { "\(directory)/certs/\(domain).crt" }

    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("repository root not found")
    }()

    /// Runs `body` with a fresh server; the server is always stopped afterwards. `options` go to
    /// `scripts/local-server up` (e.g. `--extensions`).
    static func with<T>(accounts: Int, options: [String] = [], _ body: (LocalServer) async throws -> T) async throws -> T {
        let server = try start(accounts: accounts, options: options)
        defer { server.stop() }
        return try await body(server)
    }

    static func start(accounts: Int, options: [String] = []) throws -> LocalServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("xmppload-test-server-\(UUID().uuidString.prefix(8))").path
        let output = try run(["up", "--dir", directory, "--accounts", String(accounts)] + options)
        let values = Self.keyValues(output)
        guard let port = values["XMPPLOAD_PORT"].flatMap(Int.init), let domain = values["XMPPLOAD_DOMAIN"],
            let password = values["XMPPLOAD_PASSWORD"]
        else {
            _ = try? run(["down", "--dir", directory])
            throw LocalServerError(message: "local-server up printed no details:\n\(output)")
        }
        return LocalServer(
            host: values["XMPPLOAD_HOST"] ?? "127.0.0.1", port: port, domain: domain,
            password: password, accounts: accounts, directory: directory,
            webSocketURL: values["XMPPLOAD_WS_URL"] ?? "", boshURL: values["XMPPLOAD_BOSH_URL"] ?? "",
            secureWebSocketURL: values["XMPPLOAD_WSS_URL"] ?? "", secureBOSHURL: values["XMPPLOAD_BOSH_HTTPS_URL"] ?? "",
            pid: values["XMPPLOAD_PID"].flatMap { Int32($0) },
            openMetricsURL: values["XMPPLOAD_OPENMETRICS_URL"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The `KEY=value` lines a server script's `up` prints (other lines are skipped).
    static func keyValues(_ output: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    func stop() {
        _ = try? Self.run(["down", "--dir", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let child = try ChildProcess.spawn(repositoryRoot.appendingPathComponent("scripts/local-server").path, arguments)
        defer { child.removeLog() }
        let status = child.wait(timeout: 120)
        let text = child.output
        guard status == 0 else {
            throw LocalServerError(message: "local-server \(arguments.joined(separator: " ")) failed (\(status)):\n\(text)")
        }
        return text
    }
}

struct LocalServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
