import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 40's checks against real server builds, started with `scripts/servers` (each test its own
/// directory, every build stopped by PID at the end): ejabberd 24.12 logs in with SCRAM-SHA-256-PLUS
/// over STARTTLS, SASL2 + Bind2 in fewer round trips than the classic login, and
/// `profiles/mobile-reconnect.yaml` comes back from churn through FAST and resumption; Prosody 13.0.1
/// logs in with SCRAM-SHA-1-PLUS; Prosody 0.12.3 and jabberd2 run the same profiles the classic way.
/// The manifest names the mechanism and the channel binding each time.
@Suite(.serialized) struct ModernLoginIntegrationTests {
    static func servers(_ arguments: [String], timeout: Double = 300) throws -> CommandLineTests.Result {
        try ServerBuildsScript.run(arguments, timeout: timeout)
    }

    static func withBuilds<T>(_ body: (String) throws -> T) throws -> T {
        try ServerBuildsScript.withBuilds(prefix: "xmppload-modern", body)
    }

    static func up(_ build: String, base: String, accounts: Int) throws -> (path: String, values: [String: String]) {
        try ServerBuildsScript.up(build, base: base, accounts: accounts, extra: ["--contacts", "0"])
    }

    struct Run {
        let status: Int32
        let output: String
        let summary: RunSummary
        let manifest: RunManifest
    }

    /// `xmppload run PROFILE` against a build's server.env, STARTTLS with its self-signed certificate.
    static func run(_ profile: String, env: String, sessions: Int, _ extra: [String] = [], timeout: Double = 120) throws -> Run {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-modern-run-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try CommandLineTests.xmppload(
            [
                "run", profile, "--server-env", env, "--insecure", "--tls", "starttls", "--sessions", "\(sessions)", "--out", out, "--plain",
                "--interval", "1s",
            ]
                + extra, timeout: timeout)
        let directory = ResultsDirectory(path: out)
        return Run(status: result.status, output: result.output, summary: try directory.readSummary(), manifest: try directory.readManifest())
    }

    /// ejabberd stores the accounts `scripts/servers` provisions as SCRAM-SHA-1 (like every build, for
    /// comparisons), so it offers only SCRAM-SHA-1(-PLUS); with plaintext storage it offers every
    /// SCRAM hash. This switches the running node to plaintext storage and sets the accounts'
    /// passwords again, through one call on its Erlang distribution (node.env: cookie, port).
    static func storePlainPasswords(_ values: [String: String], accounts: Int) throws {
        let dir = try #require(values["XMPPLOAD_DIR"])
        let node = try #require(values["XMPPLOAD_NODES"])
        let env = LocalServer.keyValues(try String(contentsOfFile: dir + "/node.env", encoding: .utf8))
        let code = """
            N = '\(node)', D = <<"\(values["XMPPLOAD_DOMAIN"] ?? "load.test")">>, P = <<"\(values["XMPPLOAD_PASSWORD"] ?? "secret")">>,
            ok = rpc:call(N, ejabberd_config, set_option, [{auth_password_format, D}, plain]),
            ok = rpc:call(N, ejabberd_config, set_option, [auth_password_format, plain]),
            R = rpc:call(N, lists, map, [fun(I) -> ejabberd_auth:set_password(list_to_binary("user" ++ integer_to_list(I)), D, P) end,
                lists:seq(1, \(accounts))]),
            io:format("~p~n", [length([X || X <- R, X =/= ok])]), halt(0).
            """
        let child = try ChildProcess.spawn(
            "/usr/bin/erl",
            [
                "-name", "ml\(getpid())@127.0.0.1", "-setcookie", env["COOKIE"] ?? "", "-hidden", "-noinput", "-noshell",
                "-erl_epmd_port", env["DIST_PORT"] ?? "", "-start_epmd", "false", "-dist_listen", "false", "-eval", code,
            ])
        defer { child.removeLog() }
        let status = child.wait(timeout: 60)
        guard status == 0, child.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0" else {
            throw LocalServerError(message: "switching ejabberd to plaintext storage failed (\(status)): \(child.output)")
        }
    }

    static func paths(_ summary: RunSummary) -> [String: LoginPathSummary] { summary.loginPaths ?? [:] }

    @Test(.timeLimit(.minutes(3)))
    func ejabberd2412() throws {
        try Self.withBuilds { base in
            let server = try Self.up("ejabberd@24.12", base: base, accounts: 40)
            try Self.storePlainPasswords(server.values, accounts: 40)

            // --sasl SCRAM-SHA-256-PLUS over STARTTLS: N of N, bound to the channel, named in the manifest.
            let plus = try Self.run("profiles/login.yaml", env: server.path, sessions: 20, ["--ramp", "2s", "--sasl", "SCRAM-SHA-256-PLUS"])
            #expect(plus.status == 0, "\(plus.output)")
            #expect(plus.summary.sessions.loggedIn == 20 && plus.summary.sessions.failed == 0)
            let facts = plus.manifest.serverFacts
            #expect(facts?.saslMechanism == "SCRAM-SHA-256-PLUS", "\(String(describing: facts))")
            #expect(["tls-exporter", "tls-server-end-point"].contains(facts?.saslChannelBinding ?? ""), "\(String(describing: facts))")
            #expect(facts?.softwareName == "ejabberd" && facts?.softwareVersion?.hasPrefix("24.12") == true)

            // --login sasl2 completes N of N in fewer round trips than --login classic on the same server.
            let sasl2 = try Self.run("profiles/login.yaml", env: server.path, sessions: 20, ["--ramp", "2s", "--login", "sasl2"])
            let classic = try Self.run("profiles/login.yaml", env: server.path, sessions: 20, ["--ramp", "2s", "--login", "classic"])
            #expect(sasl2.status == 0 && classic.status == 0, "\(sasl2.output)\n\(classic.output)")
            let modern = try #require(Self.paths(sasl2.summary)["sasl2-bind2"], "\(sasl2.output)")
            let old = try #require(Self.paths(classic.summary)["classic"], "\(classic.output)")
            #expect(modern.count == 20 && old.count == 20)
            #expect(Self.paths(sasl2.summary).count == 1 && Self.paths(classic.summary).count == 1)
            #expect(modern.roundTrips.mean < old.roundTrips.mean, "sasl2-bind2 \(modern.roundTrips) vs classic \(old.roundTrips)")
            #expect(sasl2.manifest.settings?.login == "sasl2" && sasl2.manifest.serverFacts?.loginPath == "sasl2-bind2")
            #expect(sasl2.output.contains("login paths") && sasl2.output.contains("sasl2-bind2"), "\(sasl2.output)")

            // Phones: churned sessions come back through FAST and through resumption (itself with the token).
            let mobile = try Self.run(
                "profiles/mobile-reconnect.yaml", env: server.path, sessions: 30, ["--ramp", "3s", "--duration", "20s"], timeout: 90)
            #expect(mobile.status == 0, "\(mobile.output)")
            let s = mobile.summary.sessions
            #expect(s.failed == 0 && s.loggedIn == 30 && (s.churned ?? 0) > 10, "\(mobile.output)")
            let phones = Self.paths(mobile.summary)
            let fast = try #require(phones["fast"], "\(mobile.output)")
            #expect(fast.reconnects > 0 && fast.reconnects == fast.count, "reconnects that used FAST: \(fast.reconnects)")
            #expect((phones["resumed"]?.reconnects ?? 0) > 0, "\(mobile.output)")
            #expect(phones["sasl2-bind2"]?.count == 30, "every first login: SASL2 + Bind2 with the password")
            for (path, figures) in phones {
                #expect(figures.latencyMilliseconds.count == figures.count && figures.latencyMilliseconds.p50 > 0, "\(path)")
                #expect(mobile.summary.latencyMilliseconds["login.path.\(path)"]?.count == figures.count, "\(path)")
            }
            #expect(fast.roundTrips.mean < phones["sasl2-bind2"]!.roundTrips.mean, "FAST saves the SCRAM exchange")
            #expect(mobile.summary.errors.isEmpty, "\(mobile.summary.errors)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func prosody13BindsSCRAMToTheChannel() throws {
        try Self.withBuilds { base in
            let server = try Self.up("prosody@13", base: base, accounts: 20)
            let run = try Self.run("profiles/login.yaml", env: server.path, sessions: 20, ["--ramp", "2s", "--sasl", "SCRAM-SHA-1-PLUS"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.summary.sessions.loggedIn == 20 && run.summary.sessions.failed == 0)
            let facts = run.manifest.serverFacts
            #expect(facts?.saslMechanism == "SCRAM-SHA-1-PLUS", "\(String(describing: facts))")
            #expect(["tls-exporter", "tls-server-end-point"].contains(facts?.saslChannelBinding ?? ""), "\(String(describing: facts))")
            #expect(facts?.softwareVersion?.hasPrefix("13.") == true && facts?.loginPath == "classic")
            #expect(Self.paths(run.summary).keys.sorted() == ["classic"], "Prosody 13.0.1 offers no SASL2 without community modules")
        }
    }

    /// Servers without SASL2 run the same profiles the classic way. jabberd2 2.7 now and then answers a
    /// SCRAM `<auth/>` under churn with `<internal-server-error/>` (seen with xmppload before issue 40
    /// too, and without a `from` in the header): that error kind is its own and tolerated here.
    @Test(.timeLimit(.minutes(3)))
    func serversWithoutSASL2StayClassic() throws {
        try Self.withBuilds { base in
            for build in ["prosody@0.12", "jabberd2@2.7"] {
                let server = try Self.up(build, base: base, accounts: 20)
                let login = try Self.run("profiles/login.yaml", env: server.path, sessions: 20, ["--ramp", "2s"])
                #expect(login.status == 0, "\(build): \(login.output)")
                #expect(login.summary.sessions.loggedIn == 20, "\(build)")
                #expect(Self.paths(login.summary).keys.sorted() == ["classic"], "\(build)")
                #expect(login.manifest.serverFacts?.saslMechanism == "SCRAM-SHA-1" && login.manifest.serverFacts?.saslChannelBinding == nil)

                let mobile = try Self.run(
                    "profiles/mobile-reconnect.yaml", env: server.path, sessions: 20, ["--ramp", "2s", "--duration", "12s"], timeout: 90)
                let jabberdOwn = mobile.summary.errors["stream-internal-server-error"] ?? 0
                #expect(
                    mobile.summary.errors.keys.allSatisfy { $0 == "stream-internal-server-error" && build.hasPrefix("jabberd2") },
                    "\(build): \(mobile.output)")
                #expect(mobile.summary.sessions.failed <= jabberdOwn, "\(build): \(mobile.output)")
                #expect((mobile.summary.sessions.churned ?? 0) > 5, "\(build)")
                let phones = Self.paths(mobile.summary)
                #expect(Set(phones.keys).isSubset(of: ["classic", "resumed"]), "\(build): \(phones.keys)")
                #expect((phones["classic"]?.count ?? 0) >= 20, "\(build)")
                if build == "prosody@0.12" { #expect((phones["resumed"]?.reconnects ?? 0) > 0, "Prosody resumes with <resume/> after SASL") }
            }
        }
    }
}
