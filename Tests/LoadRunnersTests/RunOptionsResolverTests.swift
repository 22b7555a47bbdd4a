// `run`'s options → configuration (`RunOptionsResolver`): defaults, precedence, and every problem
// reported at once with the words the command line prints.
import Foundation
import LoadProfile
import LoadResults
import RunControl
import Testing
import XMPPCore

@testable import LoadEngine
@testable import LoadRunners

@Suite struct RunOptionsResolverTests {
    static let profile = """
        name: chat
        steps:
          - login
          - stay_online
          - logout
        """

    static func definition() throws -> RunDefinition { try ProfileLoader.load(yaml: profile, file: "chat.yaml") }

    /// Options that resolve: a server, a domain, a password and a closed load of 10 users.
    static func valid() -> RunOptions {
        var options = RunOptions()
        options.servers = ["127.0.0.1:5222"]
        options.domain = "load.test"
        options.password = "secret"
        options.sessions = 10
        options.duration = "30s"
        return options
    }

    static func resolve(_ options: RunOptions, context: RunOptionsContext = RunOptionsContext(processors: 3)) throws -> ResolvedRun {
        try RunOptionsResolver(options: options, context: context).resolve(definition())
    }

    static func problems(_ options: RunOptions, context: RunOptionsContext = RunOptionsContext()) throws -> [String] {
        let definition = try definition()
        do {
            _ = try RunOptionsResolver(options: options, context: context).resolve(definition)
            return []
        } catch {
            return error.problems
        }
    }

    @Test(arguments: [("0", nil), ("0s", nil), ("30s", Duration.seconds(30)), ("1h", Duration.seconds(3600))])
    func resolveEvery(text: String, refresh: Duration?) throws {
        var options = Self.valid()
        options.resolveEvery = text
        #expect(try Self.resolve(options).configuration.endpointRefresh == refresh)
    }

    @Test func defaults() throws {
        let resolved = try Self.resolve(Self.valid())
        let configuration = resolved.configuration
        #expect(configuration.host == "127.0.0.1" && configuration.port == 5222)
        #expect(configuration.endpoints == [WeightedEndpoint(host: "127.0.0.1", port: 5222)])
        #expect(configuration.domain == "load.test" && configuration.password == "secret")
        #expect(configuration.accounts == 1...10 && configuration.accountPrefix == "user")
        #expect(configuration.interval == .seconds(5))
        #expect(configuration.maxArrivalLateness == .seconds(1))
        #expect(configuration.messageGrace == .seconds(5))
        #expect(configuration.writeStallTimeout == .seconds(30))
        #expect(configuration.endpointRefresh == .seconds(300), "names looked up again every 5 minutes")
        #expect(configuration.eventLoops == 3)
        #expect(configuration.tls == nil && configuration.mechanism == nil && !configuration.insecure)
        #expect(configuration.metricsPort == nil && configuration.metricsHost == "127.0.0.1")
        #expect(configuration.controlPort == nil && configuration.controlHost == "127.0.0.1")
        #expect(configuration.segment == .whole && configuration.sourceAddresses == nil && configuration.startAt == nil)
        #expect(configuration.xmlLimits == XMLLimits.default && configuration.maxSCRAMIterations == SCRAMClient.defaultMaxIterations)
        #expect(!configuration.interactive)
        #expect(configuration.outputDirectory.hasPrefix("results/") && configuration.outputDirectory.hasSuffix("-chat"))
        #expect(resolved.evaluator.rules.isEmpty && resolved.runID == nil && resolved.warnings.isEmpty)
        #expect(resolved.plan.stopAfter == .seconds(30))
        #expect(configuration.recordedExtras.passwordSource == "--password")
    }

    @Test func aTerminalGetsTheInteractiveLineUnlessPlain() throws {
        var options = Self.valid()
        #expect(try Self.resolve(options, context: RunOptionsContext(terminal: true)).configuration.interactive)
        options.plain = true
        #expect(try !Self.resolve(options, context: RunOptionsContext(terminal: true)).configuration.interactive)
    }

    @Test func theEnvironmentFillsWhatTheFlagsLeaveOut() throws {
        var options = Self.valid()
        options.servers = []
        options.domain = nil
        options.password = nil
        let context = RunOptionsContext(
            server: "127.0.0.2:5223", domain: "env.test", password: "from-env", accounts: "1-50",
            environment: ["XMPPLOAD_PASSWORD": "from-env"])
        let fromEnvironment = try Self.resolve(options, context: context).configuration
        #expect(fromEnvironment.host == "127.0.0.2" && fromEnvironment.port == 5223)
        #expect(fromEnvironment.domain == "env.test" && fromEnvironment.password == "from-env" && fromEnvironment.accounts == 1...50)
        #expect(fromEnvironment.recordedExtras.passwordSource == "XMPPLOAD_PASSWORD")
        // XMPPLOAD_SERVERS names a cluster, before XMPPLOAD_HOST/PORT.
        var cluster = context
        cluster.environment["XMPPLOAD_SERVERS"] = "127.0.0.3:5222,weight=2 127.0.0.4:5222"
        #expect(
            try Self.resolve(options, context: cluster).configuration.endpoints == [
                WeightedEndpoint(host: "127.0.0.3", port: 5222, weight: 2), WeightedEndpoint(host: "127.0.0.4", port: 5222),
            ])
        // Flags win.
        var given = Self.valid()
        given.accounts = "1-10"
        let flags = try Self.resolve(given, context: context).configuration
        #expect(flags.host == "127.0.0.1" && flags.domain == "load.test" && flags.password == "secret" && flags.accounts == 1...10)
    }

    @Test func aMissingDomainIsReportedAlone() throws {
        var options = Self.valid()
        options.domain = nil
        options.loops = 0
        #expect(try Self.problems(options) == ["--domain is required (or XMPPLOAD_DOMAIN)"])
    }

    /// The control port's token: none given, the run makes one (nil here); a file the user gave is
    /// read (and lets the port bind beyond loopback); one readable by others is warned about.
    @Test func theControlTokenComesFromTheGivenFile() throws {
        var options = Self.valid()
        options.controlPort = 9300
        #expect(try Self.resolve(options).controlToken == nil)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("control-token-\(UUID().uuidString.prefix(8))").path
        defer { unlink(file) }
        let token = ControlToken.generate()
        try token.write(to: file)
        options.controlTokenFile = file
        options.controlHost = "0.0.0.0"
        let resolved = try Self.resolve(options)
        #expect(resolved.controlToken == token && resolved.warnings.isEmpty)
        #expect(resolved.configuration.controlHost == "0.0.0.0")
        chmod(file, 0o644)
        #expect(try Self.resolve(options).warnings == ["the control token file '\(file)' can be read by its group or others: chmod 600 it"])
        try "short\n".write(toFile: file, atomically: false, encoding: .utf8)
        #expect(try Self.problems(options).first?.contains("must hold one token of 16 to 1024 printable characters") == true)
    }

    /// One bad option each, and the line the command line prints for it.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var change: @Sendable (inout RunOptions) -> Void
        var problem: String
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "accounts", change: { $0.accounts = "5-1" },
            problem: "--accounts must be FIRST-LAST with 0 <= FIRST <= LAST <= 999999999, got '5-1'"),
        Row(name: "metrics port", change: { $0.metricsPort = 0 }, problem: "--metrics-port must be 1 to 65535, got 0"),
        Row(name: "control port", change: { $0.controlPort = 70000 }, problem: "--control-port must be 1 to 65535, got 70000"),
        Row(
            name: "control port on every interface without a token",
            change: {
                $0.controlPort = $0.controlPort ?? 9300
                $0.controlHost = "0.0.0.0"
            },
            problem:
                "--control-host 0.0.0.0 can be reached from other hosts: give --control-token-file FILE (a token only you can read, e.g. `openssl rand -hex 32 > FILE; chmod 600 FILE`) or keep the control port on 127.0.0.1"
        ),
        Row(
            name: "control token file without a control port", change: { $0.controlTokenFile = "/nonexistent" },
            problem: "--control-token-file goes with --control-port"),
        Row(
            name: "unreadable control token file",
            change: {
                $0.controlPort = $0.controlPort ?? 9300
                $0.controlTokenFile = "/nonexistent/token"
            },
            problem: "--control-token-file: cannot read the control token file '/nonexistent/token'"),
        Row(name: "loops", change: { $0.loops = 0 }, problem: "--loops must be 1 to 256, got 0"),
        Row(name: "segment", change: { $0.segment = "3/2" }, problem: "--segment must be i/N with 0 <= i < N, got '3/2'"),
        Row(name: "tls", change: { $0.tls = "ssl" }, problem: "--tls must be starttls, direct or none, got 'ssl'"),
        Row(name: "sasl", change: { $0.sasl = "MD5" }, problem: "--sasl: unknown mechanism 'MD5'"),
        Row(name: "login", change: { $0.login = "modern" }, problem: "--login must be auto, classic or sasl2, got 'modern'"),
        Row(name: "reconnect", change: { $0.reconnect = -1 }, problem: "--reconnect must be 0...1000000, got -1"),
        Row(
            name: "churn", change: { $0.churn = "often" },
            problem: "--churn must be a positive rate such as 5, 5/s or 300/m (at most 100000/s), got 'often'"),
        Row(name: "interval", change: { $0.interval = "10ms" }, problem: "--interval must be at least 100ms, got '10ms'"),
        Row(
            name: "resolve-every", change: { $0.resolveEvery = "soon" },
            problem: "--resolve-every: 'soon' is not a duration (e.g. 500ms, 90s, 2m, 1h30m)"),
        Row(
            name: "resolve-every too often", change: { $0.resolveEvery = "10ms" },
            problem: "--resolve-every must be 0 (never) or at least 1s, got '10ms'"),
        Row(name: "tag", change: { $0.tags.append("build") }, problem: "--tag must be key=value (key: letters, digits, . _ -), got 'build'"),
        Row(name: "tag twice", change: { $0.tags += ["a=1", "a=2"] }, problem: "--tag a given twice"),
        Row(name: "label", change: { $0.label = " " }, problem: "--label must not be empty"),
        Row(
            name: "run id", change: { $0.runID = "-x" },
            problem: "--run-id must be 1-64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got '-x'"),
        Row(
            name: "start at", change: { $0.startAt = "tomorrow" },
            problem: "--start-at must be an RFC 3339 time (2026-11-23T11:00:00Z) or +DURATION (+30s), got 'tomorrow'"),
        Row(name: "password twice", change: { $0.passwordFile = "/nonexistent" }, problem: "--password and --password-file are exclusive"),
        Row(
            name: "no password", change: { $0.password = nil },
            problem:
                "no password given: use --password-file FILE, XMPPLOAD_PASSWORD or --password PW (or --server-env FILE that sets XMPPLOAD_PASSWORD)"
        ),
        Row(
            name: "dns with a server", change: { $0.dns = "127.0.0.1:53" },
            problem:
                "--dns 127.0.0.1:53 has no effect with --server, the profile's `servers:` or XMPPLOAD_SERVERS/XMPPLOAD_HOST (DNS is asked only when no server is given)"
        ),
        Row(name: "max depth", change: { $0.limits.maxDepth = 1 }, problem: "--max-depth must be 2 to 10000, got 1"),
        Row(
            name: "threshold metric", change: { $0.thresholds.append("logn.p99 < 1s") },
            problem: "--threshold 'logn.p99 < 1s': unknown metric 'logn'"),
        Row(
            name: "threshold syntax", change: { $0.thresholds.append("login.p99 < 800") },
            problem: "--threshold 'login.p99 < 800': column 16: '800' needs a unit"),
    ]

    @Test(arguments: rows)
    func aBadOptionIsNamed(_ row: Row) throws {
        var options = Self.valid()
        row.change(&options)
        let problems = try Self.problems(options)
        #expect(problems.contains { $0.hasPrefix(row.problem) }, "\(problems)")
    }

    @Test func everyProblemAtOnce() throws {
        var options = Self.valid()
        // Rows that set the same option as a later row would be overwritten by it.
        let overwritten: Set = [
            "password twice", "resolve-every", "control port on every interface without a token", "control token file without a control port",
        ]
        for row in Self.rows where !overwritten.contains(row.name) { row.change(&options) }
        let problems = try Self.problems(options)
        for row in Self.rows where !overwritten.contains(row.name) {
            #expect(problems.contains { $0.hasPrefix(row.problem) }, "\(row.name) missing from \(problems)")
        }
    }

    /// `--monitor`: the sources reach the configuration in order; every bad value is one problem, all at once.
    @Test func monitorsAreParsedAndEveryBadOneIsNamed() throws {
        var options = Self.valid()
        options.monitors = ["prosody=process:1234", "node=prometheus:http://127.0.0.1:9100/metrics?keep=node_load1"]
        let resolved = try Self.resolve(options)
        #expect(resolved.configuration.monitors.map(\.label) == ["prosody", "node"])
        #expect(resolved.configuration.monitors.map(\.kind) == ["process", "prometheus"])
        options.monitors = ["process:", "prometheus:https://h:9100/metrics", "a=process:1", "a=process:2", "disk:/"]
        let problems = try Self.problems(options)
        #expect(problems.filter { $0.hasPrefix("--monitor ") }.count == 4, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("--monitor prometheus:https://h:9100/metrics: https is not supported") })
        #expect(problems.contains { $0.hasPrefix("--monitor a=process:2: the label \"a\" is already used") })
    }

    @Test func theProfilesAndTheFlagsThresholdsReachTheEvaluatorAsParsed() throws {
        var options = Self.valid()
        options.thresholds = ["login.p99 < 800ms", "errors.rate < 1% over 10s"]
        options.warmup = "5s"
        let resolved = try Self.resolve(options)
        #expect(resolved.evaluator.rules == [try Threshold.parse("login.p99 < 800ms"), try Threshold.parse("errors.rate < 1% over 10s")])
        #expect(resolved.evaluator.warmup == 5)
        #expect(resolved.configuration.recordedExtras.thresholds == ["login.p99 < 800ms", "errors.rate < 1% over 10s"])
        #expect(resolved.configuration.recordedExtras.warmupSeconds == 5)
    }

    @Test func aSegmentTakesItsShareOfTheAccountsAndWarnsWithoutAStartTime() throws {
        var options = Self.valid()
        options.accounts = "1-100"
        options.segment = "1/4"
        let resolved = try Self.resolve(options)
        #expect(resolved.configuration.accounts == 26...50)
        #expect(resolved.runID == nil && resolved.warnings.count == 1)
        #expect(resolved.warnings[0].hasPrefix("--segment 1/4 without --run-id or --start-at"))
    }
}
