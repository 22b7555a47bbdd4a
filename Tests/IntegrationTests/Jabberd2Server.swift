import Foundation

/// A private jabberd2 for one test: started with scripts/jabberd2-server in its own temporary
/// directory on free loopback ports (router, sm, c2s and mu-conference processes), stopped by PID when
/// the test ends (`stop()` in a `defer`, so also when it fails). Tests that need one call
/// `Jabberd2Server.with(accounts:) { server in … }`, as `LocalServer` does for Prosody.
struct Jabberd2Server: Sendable {
    let host: String
    let port: Int
    let domain: String
    let password: String
    let accounts: Int
    let directory: String
    /// The MUC service (`conference.<domain>`), empty when started with `muc: false`.
    let mucService: String
    /// Whether the sm's iq-ping module answers XEP-0199 pings (`pings: false`: `--no-ping`, pings are
    /// answered `<feature-not-implemented/>`).
    let pingsAnswered: Bool

    /// Runs `body` with a fresh server; the server is always stopped afterwards.
    static func with<T>(
        accounts: Int, pings: Bool = true, muc: Bool = true, _ body: (Jabberd2Server) async throws -> T
    ) async throws -> T {
        let server = try start(accounts: accounts, pings: pings, muc: muc)
        defer { server.stop() }
        return try await body(server)
    }

    static func start(accounts: Int, pings: Bool = true, muc: Bool = true) throws -> Jabberd2Server {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("xmppload-test-jabberd2-\(UUID().uuidString.prefix(8))").path
        var arguments = ["up", "--dir", directory, "--accounts", String(accounts)]
        if !pings { arguments.append("--no-ping") }
        if !muc { arguments.append("--no-muc") }
        let output: String
        do {
            output = try run(arguments)
        } catch {
            // `up` stops what it started when it fails; this removes the directory too.
            _ = try? run(["down", "--dir", directory])
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        let values = LocalServer.keyValues(output)
        guard let port = values["XMPPLOAD_PORT"].flatMap(Int.init), let domain = values["XMPPLOAD_DOMAIN"],
            let password = values["XMPPLOAD_PASSWORD"]
        else {
            _ = try? run(["down", "--dir", directory])
            throw LocalServerError(message: "jabberd2-server up printed no details:\n\(output)")
        }
        return Jabberd2Server(
            host: values["XMPPLOAD_HOST"] ?? "127.0.0.1", port: port, domain: domain, password: password,
            accounts: accounts, directory: directory, mucService: values["XMPPLOAD_MUC"] ?? "",
            pingsAnswered: values["XMPPLOAD_PINGS"] != "off")
    }

    /// Stops exactly the processes `up` started (by the PIDs it recorded), then removes the directory.
    func stop() {
        _ = try? Self.run(["down", "--dir", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let script = LocalServer.repositoryRoot.appendingPathComponent("scripts/jabberd2-server").path
        let child = try ChildProcess.spawn(script, arguments)
        defer { child.removeLog() }
        let status = child.wait(timeout: 120)
        let text = child.output
        guard status == 0 else {
            throw LocalServerError(message: "jabberd2-server \(arguments.joined(separator: " ")) failed (\(status)):\n\(text)")
        }
        return text
    }
}
