// Turns `run`'s and `capacity`'s options (`RunOptions`) into a run ready to start (`ResolvedRun`),
// reporting every problem at once; the command line only declares the options and calls this.
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import RunControl
import XMPPCore

/// Options → configuration, plan and verdict rules for one profile (`definition`), with every usage
/// problem at once (`RunOptionProblems`, one line each, as the command line prints them).
///
/// Order of precedence: flags, then the profile (`servers:`, `churn:`, `load:`), then the
/// environment (`context`). A missing domain is reported alone (nothing else can be checked
/// meaningfully without it). With no endpoint anywhere, `configuration.endpoints` stays empty and the
/// caller asks DNS SRV (`RunEnvironment`'s resolver). Pure apart from reading `--password-file` and
/// `--server-env`.
public struct RunOptionsResolver: Sendable {
    public var options: RunOptions
    public var context: RunOptionsContext

    public init(options: RunOptions, context: RunOptionsContext) {
        self.options = options
        self.context = context
    }

    /// Largest account number accepted (account numbers travel as UInt32 in message ids).
    public static let maxAccountNumber = 999_999_999
    /// Most event loops accepted.
    public static let maxLoops = 256

    public func resolve(_ given: RunDefinition) throws(RunOptionProblems) -> ResolvedRun {
        let options = self.options
        var problems: [String] = []
        let definition = Self.applyVariables(options.variables, to: given, problems: &problems)
        // Flags over the profile: --server replaces `servers:`, which comes before the environment.
        var endpoints: [WeightedEndpoint] = []
        let problemsBeforeServers = problems.count
        let serverTexts: [String]
        if options.servers.isEmpty && !definition.servers.isEmpty {
            serverTexts = []
            do { endpoints = try definition.serverEndpoints() } catch { problems += error.problems.map(\.description) }
        } else {
            serverTexts =
                !options.servers.isEmpty
                ? options.servers
                : Self.serverList(environment: context.environment, file: options.serverEnv) ?? context.server.map { [$0] } ?? []
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
        if let source = options.source {
            do { sourcePool = try SourceAddressPool(parsing: source) } catch { problems += error.messages }
        }
        if let dns = options.dns, !serverTexts.isEmpty || !definition.servers.isEmpty {
            problems.append(
                "--dns \(dns) has no effect with --server, the profile's `servers:` or XMPPLOAD_SERVERS/XMPPLOAD_HOST (DNS is asked only when no server is given)"
            )
        }
        let startDate = options.startAt.flatMap { Self.parseStartAt($0, now: context.now, problems: &problems) }
        if let runID = options.runID, !Self.isValidRunID(runID) {
            problems.append("--run-id must be 1-64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got '\(runID)'")
        }
        guard let domain = options.domain ?? context.domain else {
            throw RunOptionProblems(["--domain is required (or XMPPLOAD_DOMAIN)"])
        }
        let accountsText = options.accounts ?? context.accounts ?? "1-\(options.sessions ?? 1)"
        var range = Self.parseRange(accountsText)
        if range == nil {
            problems.append("--accounts must be FIRST-LAST with 0 <= FIRST <= LAST <= \(Self.maxAccountNumber), got '\(accountsText)'")
        }
        if let port = options.metricsPort, !(1...65535).contains(port) { problems.append("--metrics-port must be 1 to 65535, got \(port)") }
        if let port = options.controlPort, !(1...65535).contains(port) { problems.append("--control-port must be 1 to 65535, got \(port)") }
        var warnings: [String] = []
        let controlToken = Self.controlToken(options, problems: &problems, warnings: &warnings)
        if let loops = options.loops, !(1...Self.maxLoops).contains(loops) {
            problems.append("--loops must be 1 to \(Self.maxLoops), got \(loops)")
        }
        let password = Self.resolvePassword(
            flag: options.password, file: options.passwordFile, environment: context.password, problems: &problems)
        var segment = Segment.whole
        if let text = options.segment {
            if let parsed = Segment(parsing: text) {
                segment = parsed
                if let whole = range {
                    range = parsed.share(of: whole)
                    if range == nil { problems.append("--segment \(text): --accounts \(accountsText) has fewer accounts than segments") }
                }
            } else {
                problems.append("--segment must be i/N with 0 <= i < N, got '\(text)'")
            }
        }
        let tls = options.tls.flatMap { text in
            let mode = TLSMode(rawValue: text)
            if mode == nil { problems.append("--tls must be starttls, direct or none, got '\(text)'") }
            return mode
        }
        let mechanism = options.sasl.flatMap(SASLMechanism.init(name:))
        if let sasl = options.sasl, mechanism == nil { problems.append("--sasl: unknown mechanism '\(sasl)'") }
        let loginMode = options.login.flatMap { text in
            let mode = LoginMode(rawValue: text)
            if mode == nil { problems.append("--login must be auto, classic or sasl2, got '\(text)'") }
            return mode
        }
        if let reconnect = options.reconnect, !(0...1_000_000).contains(reconnect) {
            problems.append("--reconnect must be 0...1000000, got \(reconnect)")
        }
        // `--churn` replaces the file's `churn:`.
        var churnRate = definition.churn?.perSecond
        if let churn = options.churn {
            churnRate = ChurnRate(parsing: churn)?.perSecond
            if churnRate == nil { problems.append("--churn must be a positive rate such as 5, 5/s or 300/m (at most 100000/s), got '\(churn)'") }
        }
        let interval = LoadFlags.duration(options.interval, flag: "--interval", problems: &problems) ?? .seconds(5)
        // A zero interval made the snapshot loop spin forever (even SIGTERM could not end it).
        if interval < .milliseconds(100) { problems.append("--interval must be at least 100ms, got '\(options.interval)'") }
        let writeStall = LoadFlags.duration(options.writeStall, flag: "--write-stall", problems: &problems) ?? .seconds(30)
        let resolveEvery =
            options.resolveEvery == "0"
            ? .zero : LoadFlags.duration(options.resolveEvery, flag: "--resolve-every", problems: &problems) ?? .seconds(300)
        if resolveEvery > .zero && resolveEvery < .seconds(1) {
            problems.append("--resolve-every must be 0 (never) or at least 1s, got '\(options.resolveEvery)'")
        }
        let lateness = LoadFlags.duration(options.maxLateness, flag: "--max-lateness", problems: &problems) ?? .seconds(1)
        let grace = LoadFlags.duration(options.messageGrace, flag: "--message-grace", problems: &problems) ?? .seconds(5)
        let tags = Self.parseTags(options.tags, problems: &problems)
        if let label = options.label, label.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("--label must not be empty") }
        // The load flags follow the same rules as `xmppload plan` (LoadFlags); all problems at once.
        var requestedPlan: LoadPlan?
        do { requestedPlan = try options.load.plan(over: definition.plan) } catch { problems += error.messages }
        let flagThresholds = Self.parseThresholds(options.thresholds, problems: &problems)
        problems += Self.thresholdMetricProblems(flagThresholds, definition: definition)
        let warmup = LoadFlags.duration(options.warmup, flag: "--warmup", problems: &problems) ?? .zero
        let monitors = MonitorSource.parseAll(options.monitors)
        problems += monitors.problems.map(\.description)
        let limits = options.limits.resolve(problems: &problems)
        SessionLimitOptions.checkCredentials(password: password, accountPrefix: options.accountPrefix, problems: &problems)
        // No default password: a run that guessed one would log in as nobody meant it to.
        let anonymousOnly =
            mechanism == .anonymous || definition.profiles.allSatisfy { $0.profile.login.mechanism == .anonymous }
        if password == nil && !anonymousOnly {
            problems.append(
                "no password given: use --password-file FILE, XMPPLOAD_PASSWORD or --password PW (or --server-env FILE that sets XMPPLOAD_PASSWORD)")
        }
        guard problems.isEmpty, let plan = requestedPlan, let range else { throw RunOptionProblems(problems) }

        let profileName = definition.profiles.first?.profile.name ?? "run"
        var configuration = RunConfiguration(
            host: endpoints.first?.host ?? "", port: endpoints.first?.port ?? 0, domain: domain, accounts: range,
            accountPrefix: options.accountPrefix, password: password ?? "", tls: tls, insecure: options.insecure,
            mechanism: mechanism, outputDirectory: options.out ?? "results/\(RunIdentifier.timestamp())-\(profileName)",
            interval: interval, maxArrivalLateness: lateness, metricsPort: options.metricsPort, messageGrace: grace,
            eventLoops: options.loops ?? context.processors, interactive: !options.plain && context.terminal,
            commandLine: CommandLineRedaction.redact(context.commandLine))
        configuration.segment = segment
        configuration.label = options.label
        configuration.tags = tags
        configuration.reconnectAttempts = options.reconnect
        configuration.loginMode = loginMode
        configuration.churnRate = churnRate
        // `--churn` replaces the rate; the file's `resume:` share stays.
        configuration.churnResumeShare = definition.churn?.resumeShare ?? 1
        configuration.writeStallTimeout = writeStall
        configuration.endpointRefresh = resolveEvery > .zero ? resolveEvery : nil
        configuration.metricsHost = options.metricsHost
        configuration.controlPort = options.controlPort
        configuration.controlHost = options.controlHost
        configuration.endpoints = endpoints
        configuration.sourceAddresses = sourcePool
        configuration.startAt = startDate
        // `to: random` over the whole run's population when this is one of several segments.
        if segment.count > 1, let whole = Self.parseRange(accountsText) {
            configuration.population = PlannedPopulation(plan: plan, definition: definition, accounts: whole, segmentCount: segment.count)
        }
        configuration.monitors = monitors.sources
        configuration.xmlLimits = limits.xml
        configuration.maxSCRAMIterations = limits.maxSCRAMIterations
        let thresholds = definition.thresholds + flagThresholds
        let evaluator = RunJudge.evaluator(
            plan: plan, definition: definition, segment: segment, thresholds: thresholds, warmup: warmup,
            segmented: options.runID != nil)
        let identity = RunIdentity.resolve(
            given: options.runID, definition: definition, plan: plan, accounts: accountsText, segment: segment, startAt: startDate,
            startAtIsAbsolute: !(options.startAt ?? "").hasPrefix("+"), variables: options.variables)
        configuration.recordedExtras = recordedExtras(thresholds: thresholds, warmup: warmup, identity: identity, accounts: accountsText)
        // Generators sharing a --run-id without --segment: serials overlap, so stamps carry a key.
        if identity.source == .given && segment.count == 1 { configuration.generatorKey = UInt32.random(in: 1...UInt32.max) }
        return ResolvedRun(
            configuration: configuration, plan: plan, evaluator: evaluator, definition: definition, runID: identity.id,
            warnings: (identity.warning.map { [$0] } ?? []) + warnings, controlToken: controlToken)
    }

    /// The control port's token from `--control-token-file`, and the control flags' problems: a port
    /// bound beyond loopback (`--control-host` not in 127.0.0.0/8, ::1 or localhost) needs a token
    /// file the user chose, so that nobody else can learn a token from the results directory; a
    /// token file readable by others is warned about; a token file needs a control port.
    static func controlToken(_ options: RunOptions, problems: inout [String], warnings: inout [String]) -> ControlToken? {
        guard options.controlPort != nil else {
            if options.controlTokenFile != nil { problems.append("--control-token-file goes with --control-port") }
            return nil
        }
        guard let file = options.controlTokenFile else {
            if !ControlToken.isLoopback(host: options.controlHost) {
                problems.append(
                    "--control-host \(options.controlHost) can be reached from other hosts: give --control-token-file FILE (a token only you can read, e.g. `openssl rand -hex 32 > FILE; chmod 600 FILE`) or keep the control port on 127.0.0.1"
                )
            }
            return nil
        }
        do {
            let token = try ControlToken.read(from: file)
            if ControlToken.isReadableByOthers(file) {
                warnings.append("the control token file '\(file)' can be read by its group or others: chmod 600 it")
            }
            return token
        } catch {
            problems.append("--control-token-file: \(error)")
            return nil
        }
    }

    /// `definition` with the `--var` overrides; a malformed one stops the others from applying, but
    /// their keys are still checked.
    static func applyVariables(_ variables: [String], to definition: RunDefinition, problems: inout [String]) -> RunDefinition {
        do {
            return try definition.overriding(VariableOverrides(parsing: variables))
        } catch {
            problems += error.messages
            let wellFormed = variables.filter { (try? VariableOverrides(parsing: [$0])) != nil }
            if wellFormed.count < variables.count, let overrides = try? VariableOverrides(parsing: wellFormed) {
                do { _ = try definition.overriding(overrides) } catch { problems += error.messages }
            }
            return definition
        }
    }

    /// The manifest's record of the options the configuration does not carry (never the password:
    /// only where it came from).
    func recordedExtras(thresholds: [Threshold], warmup: Duration, identity: RunIdentity, accounts: String) -> RunConfiguration.RecordedExtras {
        var extras = RunConfiguration.RecordedExtras()
        extras.variables = Dictionary(
            options.variables.compactMap { text in
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { $1 })
        extras.thresholds = thresholds.map(\.text)
        extras.warmupSeconds = warmup.seconds
        extras.abortOnFail = options.abortOnFail
        extras.dns = options.dns
        extras.runIDSource = identity.source.rawValue
        extras.wholeRunAccounts = Self.parseRange(accounts)?.count
        // As the command line reads them: the flags, then --server-env's file over the environment.
        let fileHasPassword =
            options.serverEnv.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }?
            .split(separator: "\n").contains { $0.hasPrefix("XMPPLOAD_PASSWORD=") } ?? false
        if options.password != nil {
            extras.passwordSource = "--password"
        } else if let passwordFile = options.passwordFile {
            extras.passwordSource = "--password-file \(passwordFile)"
        } else if fileHasPassword, let serverEnv = options.serverEnv {
            extras.passwordSource = "--server-env \(serverEnv)"
        } else if context.environment["XMPPLOAD_PASSWORD"] != nil {
            extras.passwordSource = "XMPPLOAD_PASSWORD"
        }
        extras.serverEnv = options.serverEnv
        extras.overwrite = options.overwrite
        extras.plain = options.plain
        return extras
    }
}
