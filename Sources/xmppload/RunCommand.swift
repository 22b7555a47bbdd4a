import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import XMPPCore

/// `xmppload run PROFILE`: a real load run against a server; writes results/<run>/.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a profile against an XMPP server and write results.",
        discussion: """
            Examples:
              xmppload run profiles/chat.yaml --server 127.0.0.1:5222 --domain load.test \\
                  --accounts 1-2000 --password secret --sessions 2000 --duration 90s --out results/chat-1
              xmppload run profiles/login-storm.yaml --rate 50 --duration 60s --tls none

            Without --server, the profile's `servers:` list names the endpoints (`--var` changes its
            `${name}`s). Defaults for --server, --domain, --password and --accounts come from XMPPLOAD_SERVERS (or
            XMPPLOAD_HOST and XMPPLOAD_PORT), XMPPLOAD_DOMAIN, XMPPLOAD_PASSWORD and XMPPLOAD_ACCOUNTS when
            set (as `scripts/local-server up` prints them), or from --server-env FILE. With no server at
            all, the domain's DNS SRV records (_xmpp-client._tcp, or _xmpps-client._tcp with --tls direct)
            name it, asked of --dns or the first nameserver of /etc/resolv.conf.
            Prefer --password-file or XMPPLOAD_PASSWORD to --password: a command line is visible to
            other users (stored command lines are redacted either way).
            Several generators: the same --run-id and --start-at, each its own --segment i/N.
            Thresholds (repeatable; also a top-level `thresholds:` list in the profile):
              --threshold 'login.p99 < 800ms' --threshold 'errors.rate < 0.1% over 10m'
              --threshold 'messages.lost == 0' --threshold 'sessions.online >= 95%'
              --threshold 'trend(message.p99) < 5%/h' --warmup 5m --abort-on-fail
            Exit codes:
              0    the load ran and every threshold passed (or there were none)
              1    the run did not work: no session completed its profile
                   (none logged in, or every one failed after login), the
                   server was unreachable at start, or results could not be
                   written (one line on stderr says why)
              2    usage or profile error (every problem listed)
              99   a threshold failed (the run completed, or --abort-on-fail
                   stopped it early)
              130  interrupted (SIGINT/SIGTERM); the results so far were written
            """
    )

    @Argument(help: "The profile (YAML) to run.")
    var profile: String

    @Option(help: "Closed model: this many virtual users, each running the profile.")
    var sessions: Int?

    @Option(help: "Closed model: start the users evenly over this long (e.g. 30s).")
    var ramp: String?

    @Option(help: "Open model: new sessions per second.")
    var rate: Double?

    @Option(help: "Stop the load after this long (e.g. 90s, 10m, 8h); sessions then log out.")
    var duration: String?

    @Option(help: "Serve the control port (/status, /load, /pause, /resume, /stop) on this port; see `xmppload control`.")
    var controlPort: Int?

    @Option(help: "The address the control port listens on.")
    var controlHost: String = "127.0.0.1"

    @Option(
        name: .customLong("threshold"),
        help: ArgumentHelp(
            "A pass/fail rule, e.g. 'login.p99 < 800ms', 'errors.rate < 0.1% over 10m', 'trend(message.p99) < 5%/h' (repeatable; adds to the profile's `thresholds:`). A failed threshold exits 99.",
            valueName: "rule"))
    var thresholds: [String] = []

    @Option(help: "Exclude the first D of the run (e.g. 5m) from thresholds and trends.")
    var warmup: String?

    @Flag(help: "Stop the run as soon as a threshold fails (judged at each interval after --warmup); exit 99.")
    var abortOnFail = false

    @OptionGroup var flags: RunFlags

    func run() async throws {
        MallocTuning.apply()
        let environment = try ConnectionDefaults.load(file: flags.serverEnv)
        let loaded: RunDefinition
        do {
            loaded = try ProfileLoader.load(path: profile)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        var options = try resolveOptions(environment: environment, definition: loaded)
        let definition = options.definition
        if options.configuration.endpoints.isEmpty {
            try await Self.discoverEndpoints(into: &options.configuration, dns: flags.dns)
        }
        if let startAt = options.configuration.startAt {
            let wait = startAt.timeIntervalSinceNow
            if wait > 0 {
                FileHandle.standardError.write(Data("xmppload: waiting \(Int(wait.rounded())) s for --start-at \(Self.rfc3339(startAt))\n".utf8))
                try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
            }
        }
        let output = ResultsDirectory(path: options.configuration.outputDirectory)
        do {
            try output.create(overwrite: flags.overwrite)
        } catch let error as ResultsDirectoryError {
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let run = LoadRun(
            configuration: options.configuration, definition: definition, plan: options.plan,
            runID: options.runID)
        let console = ConsoleProgress(
            interactive: options.configuration.interactive, runID: run.runID,
            outputDirectory: options.configuration.outputDirectory)
        let signals = SignalTrap(signals: [SIGINT, SIGTERM]) { run.requestStop() }
        defer { signals.cancel() }
        let watch = ThresholdWatch(monitor: ThresholdMonitor(evaluator: options.evaluator), abortOnFail: abortOnFail)
        console.started(configuration: options.configuration, plan: options.plan, profile: definition)
        let summary: RunSummary
        let verdict: Verdict
        do {
            summary = try await run.run(outputs: [console, watch], judge: watch.judge)
            guard let judged = watch.verdict else { throw ExitCode(ExitStatus.failure.rawValue) }
            verdict = judged
        } catch {
            FileHandle.standardError.write(Data("xmppload: the run failed: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        console.finished(summary: summary)
        let status = Self.exitStatus(verdict: verdict, stopReason: summary.stopReason)
        if status == .failure { FileHandle.standardError.write(Data("xmppload: \(verdict.outcome.reason)\n".utf8)) }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// The run's exit status: 130 interrupted, 1 when it did not work at all, 99 a threshold failed.
    static func exitStatus(verdict: Verdict, stopReason: String) -> ExitStatus {
        if stopReason == StopReason.interrupted.rawValue { return .interrupted }
        if verdict.outcome.failed { return .failure }
        if !verdict.thresholdsPassed || stopReason == StopReason.thresholdsFailed.rawValue { return .thresholdsFailed }
        return .success
    }

    struct ResolvedOptions {
        var configuration: RunConfiguration
        var plan: LoadPlan
        /// The profile's and the command line's thresholds, warm-up and the plan's end and target.
        var evaluator: VerdictEvaluator
        /// The profile with the `--var` overrides applied.
        var definition: RunDefinition
        var runID: String?
    }

    /// No endpoint from flags or environment: ask DNS SRV for the domain's, as clients do.
    static func discoverEndpoints(into configuration: inout RunConfiguration, dns: String?) async throws {
        let found: [WeightedEndpoint]
        do {
            found = try await resolveEndpoints(domain: configuration.domain, directTLS: configuration.tls == .direct, dns: dns)
        } catch {
            FileHandle.standardError.write(Data("xmppload: no --server given and DNS did not name one: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        let spread = WeightedEndpoints(found)!
        configuration.endpoints = found
        configuration.endpointsFromDNS = true
        configuration.host = spread.preferred[0].host
        configuration.port = spread.preferred[0].port
    }

    func resolveOptions(environment: ConnectionDefaults, definition: RunDefinition) throws -> ResolvedOptions {
        try Self.resolve(
            flags: flags, load: LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: flags.seed),
            thresholds: thresholds, warmup: warmup, abortOnFail: abortOnFail, environment: environment, definition: definition,
            control: (controlPort, controlHost))
    }

    /// The run's configuration, plan and verdict rules from the shared flags (`flags`), the load
    /// flags and the thresholds; every problem at once (a `ValidationError`). `run` and `capacity`
    /// both resolve their flags here; `control` is `run`'s `--control-port`/`--control-host`.
    static func resolve(
        flags: RunFlags, load: LoadFlags, thresholds: [String], warmup: String?, abortOnFail: Bool,
        environment: ConnectionDefaults, definition: RunDefinition, control: (port: Int?, host: String) = (nil, "127.0.0.1")
    ) throws -> ResolvedOptions {
        let (controlPort, controlHost) = control
        let (server, dns, source, variables, startAt, runId) = (flags.server, flags.dns, flags.source, flags.variables, flags.startAt, flags.runId)
        let (domain, accounts, accountPrefix, password, passwordFile) = (
            flags.domain, flags.accounts, flags.accountPrefix, flags.password, flags.passwordFile
        )
        let (serverEnv, tls, insecure, sasl, segment, out) = (flags.serverEnv, flags.tls, flags.insecure, flags.sasl, flags.segment, flags.out)
        let (interval, metricsPort, metricsHost, loops, maxLateness) = (
            flags.interval, flags.metricsPort, flags.metricsHost, flags.loops, flags.maxLateness
        )
        let (messageGrace, plain, churn, writeStall, reconnect) = (flags.messageGrace, flags.plain, flags.churn, flags.writeStall, flags.reconnect)
        let (label, tag, hardening) = (flags.label, flags.tag, flags.hardening)
        let (sessions, ramp, rate, duration, seed) = (load.sessions, load.ramp, load.rate, load.duration, load.seed)
        var problems: [String] = []
        var definition = definition
        do {
            definition = try definition.overriding(VariableOverrides(parsing: variables))
        } catch {
            problems += error.messages
            // A malformed --var stops the others from applying, but their keys are still checked.
            let wellFormed = variables.filter { (try? VariableOverrides(parsing: [$0])) != nil }
            if wellFormed.count < variables.count, let overrides = try? VariableOverrides(parsing: wellFormed) {
                do { _ = try definition.overriding(overrides) } catch { problems += error.messages }
            }
        }
        // Flags over the profile: --server replaces `servers:`, which comes before the environment.
        var endpoints: [WeightedEndpoint] = []
        let problemsBeforeServers = problems.count
        let serverTexts: [String]
        if server.isEmpty && !definition.servers.isEmpty {
            serverTexts = []
            do { endpoints = try definition.serverEndpoints() } catch { problems += error.problems.map(\.description) }
        } else {
            serverTexts =
                !server.isEmpty
                ? server
                : Self.serverList(environment: ProcessInfo.processInfo.environment, file: serverEnv) ?? environment.server.map { [$0] } ?? []
        }
        for text in serverTexts {
            switch WeightedEndpoint.parse(text) {
            case .success(let endpoint): endpoints.append(endpoint)
            case .failure(let error): problems.append("--server \(error)")
            }
        }
        if problems.count == problemsBeforeServers {
            problems += Self.transportProblems(definition: definition, endpoints: endpoints)
        }
        var sourcePool: SourceAddressPool?
        if let source {
            do { sourcePool = try SourceAddressPool(parsing: source) } catch { problems += error.messages }
        }
        if let dns, !serverTexts.isEmpty || !definition.servers.isEmpty {
            problems.append(
                "--dns \(dns) has no effect with --server, the profile's `servers:` or XMPPLOAD_SERVERS/XMPPLOAD_HOST (DNS is asked only when no server is given)"
            )
        }
        var startDate: Date?
        if let startAt {
            startDate = Self.parseStartAt(startAt, now: Date(), problems: &problems)
        }
        if let runId, !Self.isValidRunID(runId) {
            problems.append("--run-id must be 1-64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got '\(runId)'")
        }
        guard let domain = domain ?? environment.domain else {
            throw ValidationError("--domain is required (or XMPPLOAD_DOMAIN)")
        }
        let accountsText = accounts ?? environment.accounts ?? "1-\(sessions ?? 1)"
        var range = Self.parseRange(accountsText)
        if range == nil {
            problems.append("--accounts must be FIRST-LAST with 0 <= FIRST <= LAST <= \(Self.maxAccountNumber), got '\(accountsText)'")
        }
        if let metricsPort, !(1...65535).contains(metricsPort) {
            problems.append("--metrics-port must be 1 to 65535, got \(metricsPort)")
        }
        if let controlPort, !(1...65535).contains(controlPort) {
            problems.append("--control-port must be 1 to 65535, got \(controlPort)")
        }
        if let loops, !(1...Self.maxLoops).contains(loops) {
            problems.append("--loops must be 1 to \(Self.maxLoops), got \(loops)")
        }
        let resolvedPassword = Self.resolvePassword(
            flag: password, file: passwordFile, environment: environment.password,
            problems: &problems)
        var segmentValue = Segment.whole
        if let segment {
            if let parsed = Segment(parsing: segment) {
                segmentValue = parsed
                if let whole = range {
                    range = parsed.share(of: whole)
                    if range == nil {
                        problems.append("--segment \(segment): --accounts \(accountsText) has fewer accounts than segments")
                    }
                }
            } else {
                problems.append("--segment must be i/N with 0 <= i < N, got '\(segment)'")
            }
        }
        let tlsPolicy: TLSMode?
        if let tls {
            tlsPolicy = TLSMode(rawValue: tls)
            if tlsPolicy == nil { problems.append("--tls must be starttls, direct or none, got '\(tls)'") }
        } else {
            tlsPolicy = nil
        }
        let mechanism = sasl.flatMap(SASLMechanism.init(name:))
        if let sasl, mechanism == nil { problems.append("--sasl: unknown mechanism '\(sasl)'") }
        if let reconnect, !(0...1_000_000).contains(reconnect) { problems.append("--reconnect must be 0...1000000, got \(reconnect)") }
        // `--churn` replaces the file's `churn:`.
        var churnRate = definition.churn?.perSecond
        if let churn {
            churnRate = ChurnRate(parsing: churn)?.perSecond
            if churnRate == nil { problems.append("--churn must be a positive rate such as 5, 5/s or 300/m (at most 100000/s), got '\(churn)'") }
        }
        let intervalValue = LoadFlags.duration(interval, flag: "--interval", problems: &problems) ?? .seconds(5)
        // A zero interval made the snapshot loop spin forever (even SIGTERM could not end it).
        if intervalValue < .milliseconds(100) { problems.append("--interval must be at least 100ms, got '\(interval)'") }
        let writeStallValue = LoadFlags.duration(writeStall, flag: "--write-stall", problems: &problems) ?? .seconds(30)
        let latenessValue = LoadFlags.duration(maxLateness, flag: "--max-lateness", problems: &problems) ?? .seconds(1)
        let graceValue = LoadFlags.duration(messageGrace, flag: "--message-grace", problems: &problems) ?? .seconds(5)
        let tagValues = Self.parseTags(tag, problems: &problems)
        if let label, label.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("--label must not be empty") }
        // The load flags follow the same rules as `xmppload plan` (LoadFlags); all problems at once.
        var requestedPlan: LoadPlan?
        do {
            requestedPlan = try LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: seed)
                .plan(over: definition.plan)
        } catch {
            problems += error.messages
        }
        let flagThresholds = Self.parseThresholds(thresholds, problems: &problems)
        problems += Self.thresholdMetricProblems(flagThresholds, definition: definition)
        let warmupValue = LoadFlags.duration(warmup, flag: "--warmup", problems: &problems) ?? .zero
        let limits = hardening.resolve(problems: &problems)
        HardeningOptions.checkCredentials(password: resolvedPassword, accountPrefix: accountPrefix, problems: &problems)
        // No default password: a run that guessed one would log in as nobody meant it to.
        let anonymousOnly =
            mechanism == .anonymous || definition.profiles.allSatisfy { $0.profile.login.mechanism == .anonymous }
        if resolvedPassword == nil && !anonymousOnly {
            problems.append(
                "no password given: use --password-file FILE, XMPPLOAD_PASSWORD or --password PW (or --server-env FILE that sets XMPPLOAD_PASSWORD)")
        }
        guard problems.isEmpty, let plan = requestedPlan else {
            throw ValidationError(problems.joined(separator: "\n"))
        }

        let profileName = definition.profiles.first?.profile.name ?? "run"
        let output = out ?? "results/\(RunIdentifier.timestamp())-\(profileName)"
        let interactive = !plain && isatty(STDOUT_FILENO) != 0
        var configuration = RunConfiguration(
            host: endpoints.first?.host ?? "", port: endpoints.first?.port ?? 0, domain: domain, accounts: range!, accountPrefix: accountPrefix,
            password: resolvedPassword ?? "", tls: tlsPolicy, insecure: insecure,
            mechanism: mechanism, outputDirectory: output, interval: intervalValue,
            maxArrivalLateness: latenessValue, metricsPort: metricsPort, messageGrace: graceValue,
            eventLoops: loops ?? ProcessInfo.processInfo.activeProcessorCount,
            interactive: interactive, commandLine: CommandLineRedaction.redact(CommandLine.arguments))
        configuration.segment = segmentValue
        configuration.label = label
        configuration.tags = tagValues
        configuration.reconnectAttempts = reconnect
        configuration.churnRate = churnRate
        configuration.writeStallTimeout = writeStallValue
        configuration.metricsHost = metricsHost
        configuration.controlPort = controlPort
        configuration.controlHost = controlHost
        configuration.endpoints = endpoints
        configuration.sourceAddresses = sourcePool
        configuration.startAt = startDate
        // `to: random` over the whole run's population when this is one of several segments.
        if segmentValue.count > 1, let whole = Self.parseRange(accountsText) {
            configuration.population = PlannedPopulation(plan: plan, definition: definition, accounts: whole, segmentCount: segmentValue.count)
        }
        configuration.xmlLimits = limits.xml
        configuration.maxSCRAMIterations = limits.maxSCRAMIterations
        let evaluator = VerdictEvaluator(
            rules: (definition.thresholds + flagThresholds).map(VerdictRule.init),
            warmup: warmupValue.seconds, loadEnd: plan.stopAfter?.seconds,
            targetSessions: Self.targetUsers(plan), rampEnd: Self.rampEnd(plan),
            planned: Self.plannedWork(plan: plan, definition: definition, segment: segmentValue),
            segmented: segmentValue.count > 1 || runId != nil)
        let identity = RunIdentity.resolve(
            given: runId, definition: definition, plan: plan, accounts: accountsText, segment: segmentValue, startAt: startDate,
            startAtIsAbsolute: !(startAt ?? "").hasPrefix("+"), variables: variables)
        if let warning = identity.warning { FileHandle.standardError.write(Data("xmppload: warning: \(warning)\n".utf8)) }
        configuration.recordedExtras = flags.recordedExtras(
            abortOnFail: abortOnFail, thresholds: definition.thresholds + flagThresholds, warmup: warmupValue, identity: identity,
            accounts: accountsText)
        // Generators sharing a --run-id without --segment: serials overlap, so stamps carry a key.
        if identity.source == .given && segmentValue.count == 1 { configuration.generatorKey = UInt32.random(in: 1...UInt32.max) }
        return ResolvedOptions(
            configuration: configuration, plan: plan, evaluator: evaluator, definition: definition,
            runID: identity.id)
    }

    /// One line per profile whose `transport:` has no endpoint among `endpoints`; with none (DNS SRV
    /// will name them, and SRV names TCP endpoints only), as if the run had one TCP endpoint.
    static func transportProblems(definition: RunDefinition, endpoints: [WeightedEndpoint]) -> [String] {
        do {
            try ProfileEndpoints.check(definition, endpoints: endpoints.isEmpty ? [WeightedEndpoint(host: "dns-srv", port: 5222)] : endpoints)
            return []
        } catch {
            return error.lines
        }
    }

    /// Parses `--threshold` texts; each problem becomes `--threshold 'TEXT': column N: message (hint)`.
    static func parseThresholds(_ texts: [String], problems: inout [String]) -> [Threshold] {
        var parsed: [Threshold] = []
        for text in texts {
            do {
                parsed.append(try Threshold.parse(text))
            } catch {
                problems += error.problems.map { "--threshold '\(text)': \($0)" }
            }
        }
        return parsed
    }

    /// The users a closed plan aims at (the largest phase's), for `sessions.online >= 95%`; nil for open plans.
    static func targetUsers(_ plan: LoadPlan) -> Int? {
        let targets = plan.phases.compactMap { phase -> Int? in
            switch phase.model {
            case .closed(let users, _): return users
            case .rampingUsers(let from, let to): return max(from, to)
            case .openConstant, .openRamping: return nil
            }
        }
        return targets.max()
    }

    /// `XMPPLOAD_SERVERS=a:5222,b:5222` (comma or space separated; `,weight=W` attaches to the
    /// endpoint before it) from the --server-env file, else the environment.
    static func serverList(environment: [String: String], file: String?) -> [String]? {
        var value = environment["XMPPLOAD_SERVERS"]
        if let file, let text = try? String(contentsOfFile: file, encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("XMPPLOAD_SERVERS=") {
                value = String(line.dropFirst("XMPPLOAD_SERVERS=".count))
            }
        }
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        var items: [String] = []
        for piece in value.split(whereSeparator: { $0 == "," || $0 == " " }) {
            if piece.hasPrefix("weight="), !items.isEmpty { items[items.count - 1] += ",\(piece)" } else { items.append(String(piece)) }
        }
        return items
    }

    /// RFC 3339 (`2026-11-23T11:00:00Z`, fractional seconds and offsets allowed) or `+DURATION`
    /// after `now`. A time more than a second in the past is a problem.
    static func parseStartAt(_ text: String, now: Date, problems: inout [String]) -> Date? {
        let date: Date
        if text.hasPrefix("+") {
            guard let wait = LoadFlags.duration(String(text.dropFirst()), flag: "--start-at", problems: &problems) else { return nil }
            let (seconds, attoseconds) = wait.components
            date = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        } else {
            let plain = ISO8601DateFormatter()
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            guard let parsed = plain.date(from: text) ?? fractional.date(from: text) else {
                problems.append("--start-at must be an RFC 3339 time (2026-11-23T11:00:00Z) or +DURATION (+30s), got '\(text)'")
                return nil
            }
            date = parsed
        }
        if date.timeIntervalSince(now) < -1 {
            problems.append("--start-at \(text) is \(Int(-date.timeIntervalSince(now))) s in the past")
            return nil
        }
        return date
    }

    static func rfc3339(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// Safe as a directory and file name on every generator: 1-64 of [A-Za-z0-9._-], not starting
    /// with '.' or '-'.
    static func isValidRunID(_ text: String) -> Bool {
        guard (1...64).contains(text.count), let first = text.first, first != ".", first != "-" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
    }

    /// `--tag key=value` pairs: the key is letters, digits, `.`, `_` or `-`; each key once.
    static func parseTags(_ arguments: [String], problems: inout [String]) -> [String: String] {
        var tags: [String: String] = [:]
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty,
                parts[0].allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) })
            else {
                problems.append("--tag must be key=value (key: letters, digits, . _ -), got '\(argument)'")
                continue
            }
            let key = String(parts[0])
            if tags[key] != nil { problems.append("--tag \(key) given twice") }
            tags[key] = String(parts[1])
        }
        return tags
    }

    static func parseServer(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// Largest account number accepted (account numbers travel as UInt32 in message ids).
    static let maxAccountNumber = 999_999_999
    /// Most event loops accepted.
    static let maxLoops = 256

    static func parseRange(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]), let last = Int(parts[1]), first <= last, first >= 0,
            last <= maxAccountNumber
        else { return nil }
        return first...last
    }

    /// The password from `--password`, `--password-file` or XMPPLOAD_PASSWORD (in that order; at most
    /// one of the flags). A file gives its first line, without the line end.
    static func resolvePassword(flag: String?, file: String?, environment: String?, problems: inout [String]) -> String? {
        if flag != nil && file != nil {
            problems.append("--password and --password-file are exclusive")
        }
        if let flag { return flag }
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                problems.append("--password-file: cannot read '\(file)'")
                return nil
            }
            let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let password = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            if password.isEmpty { problems.append("--password-file: '\(file)' starts with an empty line") }
            return password
        }
        return environment
    }
}

/// The run's threshold checker, one of its outputs: fed every interval, it asks the run to stop
/// (once) when `--abort-on-fail` is set and a threshold fails after the warm-up.
/// `@unchecked Sendable`: every access to the monitor holds `lock`.
final class ThresholdWatch: RunOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var monitor: ThresholdMonitor
    private let abortOnFail: Bool
    private var stopped = false

    init(monitor: ThresholdMonitor, abortOnFail: Bool) {
        self.monitor = monitor
        self.abortOnFail = abortOnFail
    }

    /// Adds the interval; returns the first failing threshold when the run must stop now.
    func observe(interval: IntervalSnapshot, cumulative: IntervalSnapshot) -> ThresholdResult? {
        lock.withLock {
            let failing = monitor.observe(interval: interval, cumulative: cumulative)
            guard abortOnFail, !stopped, let first = failing.first else { return nil }
            stopped = true
            return first
        }
    }

    var evaluator: VerdictEvaluator { lock.withLock { monitor.evaluator } }

    /// The verdict `judge` gave, once it did.
    private(set) var verdict: Verdict? {
        get { lock.withLock { judged } }
        set { lock.withLock { judged = newValue } }
    }
    private var judged: Verdict?

    /// The run's judge (`LoadRun.run(outputs:judge:)`): puts the verdict into the summary before
    /// summary.json, the manifest and report.html are written, and keeps it for the exit status.
    func judge(_ summary: inout RunSummary) {
        let evaluator = self.evaluator
        let lostAtEnd = summary.messages.lost > evaluator.lostInIntervals ? summary.messages.lost - evaluator.lostInIntervals : 0
        let verdict = evaluator.verdict(stopReason: summary.stopReason, finalLost: lostAtEnd)
        summary.apply(verdict)
        self.verdict = verdict
    }

    func intervalEnded(_ interval: IntervalEnd) -> StopReason? {
        guard let failed = observe(interval: interval.snapshot, cumulative: interval.cumulative) else { return nil }
        FileHandle.standardError.write(Data("xmppload: threshold failed: \(failed.line) — stopping (--abort-on-fail)\n".utf8))
        return .thresholdsFailed
    }

    /// The verdict was applied by `judge` before the run's files were written.
    func runEnded(_ end: RunEnd) {}
}

extension VerdictRule {
    /// The evaluator's form of a parsed threshold.
    init(_ threshold: Threshold) {
        let measure: VerdictMeasure
        switch threshold.quantity {
        case .latency(let metric, let statistic):
            switch statistic {
            case .count: measure = .latencyCount(metric: metric)
            case .rate: measure = .latencyRate(metric: metric)
            default: measure = .latencyPercentile(metric: metric, percentile: statistic.percentile ?? 100, label: statistic.rawValue)
            }
        case .errorsRate: measure = .errorsRate
        case .errorsCount: measure = .errorsCount
        case .messagesLost: measure = .messagesLost
        case .messagesLoss: measure = .messagesLoss
        case .sessionsOnline: measure = .sessionsOnline
        case .sessionsFailed: measure = .sessionsFailed
        case .generatorRSS: measure = .generatorRSS
        case .generatorCPU: measure = .generatorCPU
        case .droppedArrivals: measure = .droppedArrivals
        }
        let unit: VerdictUnit
        switch threshold.unit {
        case .milliseconds: unit = .milliseconds
        case .count: unit = .count
        case .fraction: unit = .fraction
        case .perSecond: unit = .perSecond
        case .bytes: unit = .bytes
        case .fractionPerHour: unit = .fractionPerHour
        }
        self.init(
            measure: measure, comparison: VerdictComparison(rawValue: threshold.comparison.rawValue) ?? .less,
            bound: threshold.bound, unit: unit, window: threshold.window, isTrend: threshold.isTrend, text: threshold.text)
    }
}
