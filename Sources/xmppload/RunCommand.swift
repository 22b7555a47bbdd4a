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

        Defaults for --server, --domain, --password and --accounts come from XMPPLOAD_HOST,
        XMPPLOAD_PORT, XMPPLOAD_DOMAIN, XMPPLOAD_PASSWORD and XMPPLOAD_ACCOUNTS when set (as
        `scripts/local-server up` prints them), or from --server-env FILE. Prefer --password-file
        or XMPPLOAD_PASSWORD to --password: a command line is visible to other users (stored
        command lines are redacted either way).
        Exit codes: 0 the run completed, 1 the run could not run, 2 usage or profile error,
        130 the run was interrupted (SIGINT/SIGTERM; the results so far were written).
        """
    )

    @Argument(help: "The profile (YAML) to run.")
    var profile: String

    @Option(help: "The server's c2s address, HOST:PORT.")
    var server: String?

    @Option(help: "The XMPP domain of the test accounts.")
    var domain: String?

    @Option(help: "Account numbers FIRST-LAST: accounts are <prefix>FIRST..<prefix>LAST@<domain>.")
    var accounts: String?

    @Option(help: "Account name prefix.")
    var accountPrefix: String = "user"

    @Option(help: "The password shared by the test accounts (prefer --password-file or XMPPLOAD_PASSWORD).")
    var password: String?

    @Option(help: "Read the accounts' password from the first line of this file.")
    var passwordFile: String?

    @Option(help: "Read XMPPLOAD_* connection details from this file (as written by scripts/local-server).")
    var serverEnv: String?

    @Option(help: "Closed model: this many virtual users, each running the profile.")
    var sessions: Int?

    @Option(help: "Closed model: start the users evenly over this long (e.g. 30s).")
    var ramp: String?

    @Option(help: "Open model: new sessions per second.")
    var rate: Double?

    @Option(help: "Stop the load after this long (e.g. 90s, 10m, 8h); sessions then log out.")
    var duration: String?

    @Option(help: "TLS: starttls (default; a server that does not offer it fails with tls-not-offered), direct (e.g. port 5223) or none (plaintext, explicit).")
    var tls: String?

    @Flag(help: "Accept self-signed or otherwise unverifiable server certificates (lab servers).")
    var insecure = false

    @Option(help: "Force a SASL mechanism: SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1, PLAIN, ANONYMOUS.")
    var sasl: String?

    @Option(help: "Seed for think times, choices and targets (reproducible runs).")
    var seed: UInt64?

    @Option(help: ArgumentHelp("Run generator i of N (0-based): arrivals n with n mod N = i and the i-th of N blocks of --accounts; N generators together run the plan once. Merge their results with `xmppload report DIR...`.", valueName: "i/N"))
    var segment: String?

    @Option(help: "Results directory (default results/<timestamp>-<profile>); one that holds a run is refused.")
    var out: String?

    @Flag(help: "Replace the run already in --out.")
    var overwrite = false

    @Option(help: "Snapshot interval (e.g. 5s).")
    var interval: String = "5s"

    @Option(help: "Serve Prometheus metrics on this port of 127.0.0.1.")
    var metricsPort: Int?

    @Option(help: "Event loops (threads); default: one per core.")
    var loops: Int?

    @Option(help: "An arrival this late is dropped, not started.")
    var maxLateness: String = "1s"

    @Option(help: "After the load stops, sessions stay online up to this long for messages in flight; then missing ones count as lost.")
    var messageGrace: String = "5s"

    @Flag(help: "Plain progress lines even on a terminal.")
    var plain = false

    func run() async throws {
        let environment = try ConnectionDefaults.load(file: serverEnv)
        let definition: RunDefinition
        do {
            definition = try ProfileLoader.load(path: profile)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let options = try resolveOptions(environment: environment, definition: definition)
        let output = ResultsDirectory(path: options.configuration.outputDirectory)
        do {
            try output.create(overwrite: overwrite)
        } catch let error as ResultsDirectoryError {
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let run = LoadRun(configuration: options.configuration, definition: definition, plan: options.plan)
        let console = ConsoleProgress(interactive: options.configuration.interactive, runID: run.runID,
                                      outputDirectory: options.configuration.outputDirectory)
        let signals = SignalTrap(signals: [SIGINT, SIGTERM]) { run.requestStop() }
        defer { signals.cancel() }
        console.started(configuration: options.configuration, plan: options.plan, profile: definition)
        let summary: RunSummary
        do {
            summary = try await run.run { console.report($0) }
        } catch {
            FileHandle.standardError.write(Data("xmppload: the run failed: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        console.finished(summary: summary)
        if summary.stopReason == StopReason.interrupted.rawValue {
            throw ExitCode(ExitStatus.interrupted.rawValue)
        }
    }

    struct ResolvedOptions {
        var configuration: RunConfiguration
        var plan: LoadPlan
    }

    func resolveOptions(environment: ConnectionDefaults, definition: RunDefinition) throws -> ResolvedOptions {
        var problems: [String] = []
        let serverText = server ?? environment.server ?? "127.0.0.1:5222"
        let (host, port) = Self.parseServer(serverText) ?? { problems.append("--server must be HOST:PORT, got '\(serverText)'"); return ("", 0) }()
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
        if let loops, !(1...Self.maxLoops).contains(loops) {
            problems.append("--loops must be 1 to \(Self.maxLoops), got \(loops)")
        }
        let resolvedPassword = Self.resolvePassword(flag: password, file: passwordFile, environment: environment.password,
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
        let intervalValue = LoadFlags.duration(interval, flag: "--interval", problems: &problems) ?? .seconds(5)
        let latenessValue = LoadFlags.duration(maxLateness, flag: "--max-lateness", problems: &problems) ?? .seconds(1)
        let graceValue = LoadFlags.duration(messageGrace, flag: "--message-grace", problems: &problems) ?? .seconds(5)
        // The load flags follow the same rules as `xmppload plan` (LoadFlags); all problems at once.
        var requestedPlan: LoadPlan?
        do {
            requestedPlan = try LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: seed)
                .plan(over: definition.plan)
        } catch {
            problems += error.messages
        }
        guard problems.isEmpty, let plan = requestedPlan else {
            throw ValidationError(problems.joined(separator: "\n"))
        }

        let profileName = definition.profiles.first?.profile.name ?? "run"
        let output = out ?? "results/\(RunIdentifier.timestamp())-\(profileName)"
        let interactive = !plain && isatty(STDOUT_FILENO) != 0
        var configuration = RunConfiguration(
            host: host, port: port, domain: domain, accounts: range!, accountPrefix: accountPrefix,
            password: resolvedPassword ?? "secret", tls: tlsPolicy, insecure: insecure,
            mechanism: mechanism, outputDirectory: output, interval: intervalValue,
            maxArrivalLateness: latenessValue, metricsPort: metricsPort, messageGrace: graceValue,
            eventLoops: loops ?? ProcessInfo.processInfo.activeProcessorCount,
            interactive: interactive, commandLine: CommandLineRedaction.redact(CommandLine.arguments))
        configuration.segment = segmentValue
        return ResolvedOptions(configuration: configuration, plan: plan)
    }

    static func parseServer(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
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
              last <= maxAccountNumber else { return nil }
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
