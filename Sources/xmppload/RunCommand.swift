import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import LoadRunners
import RunControl

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

    @Option(help: "The address the control port listens on (beyond loopback only with --control-token-file).")
    var controlHost: String = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "The control port's token, from the first line of this file (default: a fresh one in OUT/control-token, readable by you only).",
            valueName: "file"))
    var controlTokenFile: String?

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
        var resolved = try Self.resolve(options, environment: environment, definition: loaded)
        let definition = resolved.definition
        if resolved.configuration.endpoints.isEmpty {
            try await Self.discoverEndpoints(into: &resolved.configuration, dns: flags.dns)
        }
        if let startAt = resolved.configuration.startAt {
            let wait = startAt.timeIntervalSinceNow
            if wait > 0 {
                FileHandle.standardError.write(
                    Data("xmppload: waiting \(Int(wait.rounded())) s for --start-at \(RunOptionsResolver.rfc3339(startAt))\n".utf8))
                try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
            }
        }
        let output = ResultsDirectory(path: resolved.configuration.outputDirectory)
        do {
            try output.create(overwrite: flags.overwrite)
        } catch let error as ResultsDirectoryError {
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let run = LoadRun(
            configuration: resolved.configuration, definition: definition, plan: resolved.plan, runID: resolved.runID)
        let console = ConsoleProgress(
            interactive: resolved.configuration.interactive, runID: run.runID,
            outputDirectory: resolved.configuration.outputDirectory)
        let signals = SignalTrap(signals: [SIGINT, SIGTERM]) { run.requestStop() }
        defer { signals.cancel() }
        let judge = RunJudge(evaluator: resolved.evaluator, abortOnFail: abortOnFail)
        var inputs: [any RunInput] = []
        var generatedTokenFile: String?
        defer { if let generatedTokenFile { unlink(generatedTokenFile) } }
        if let port = resolved.configuration.controlPort {
            let (token, file) = try Self.controlToken(resolved, output: output)
            if resolved.controlToken == nil { generatedTokenFile = file }
            inputs.append(ControlPort(host: resolved.configuration.controlHost, port: port, token: token))
        }
        console.started(configuration: resolved.configuration, plan: resolved.plan, profile: definition)
        if let file = generatedTokenFile ?? controlTokenFile {
            Console.print(
                "control token: \(file)"
                    + (generatedTokenFile != nil
                        ? " (fresh for this run, readable by you only, removed at its end; `xmppload control` finds it, or pass --token-file)"
                        : " (--control-token-file)"))
        }
        let summary: RunSummary
        let verdict: Verdict
        do {
            let result = try await run.run(judge: judge, sinks: [console], inputs: inputs)
            summary = result.summary
            verdict = result.verdict
        } catch let error as EndpointResolutionError {
            // A server name that does not resolve is a configuration mistake, said before any session.
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        } catch {
            FileHandle.standardError.write(Data("xmppload: the run failed: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        console.finished(summary: summary)
        let status = Self.exitStatus(verdict: verdict, stopReason: summary.stopReason)
        if status == .failure { FileHandle.standardError.write(Data("xmppload: \(verdict.outcome.reason)\n".utf8)) }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// Every option of this command as plain values.
    var options: RunOptions {
        var options = flags.options(load: LoadFlags(sessions: sessions, ramp: ramp, rate: rate, duration: duration, seed: flags.seed))
        options.thresholds = thresholds
        options.warmup = warmup
        options.abortOnFail = abortOnFail
        options.controlPort = controlPort
        options.controlHost = controlHost
        options.controlTokenFile = controlTokenFile
        return options
    }

    /// The control port's token: the one from `--control-token-file`, or a fresh one written to
    /// `OUT/control-token` (0600). A token file that cannot be written fails the run (exit 1): a
    /// control port nobody can use is no control port.
    static func controlToken(_ resolved: ResolvedRun, output: ResultsDirectory) throws -> (ControlToken, String) {
        if let given = resolved.controlToken { return (given, "") }
        let token = ControlToken.generate()
        let file = output.file(ControlToken.fileName)
        do {
            try token.write(to: file)
        } catch {
            FileHandle.standardError.write(Data("xmppload: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        return (token, file)
    }

    /// The run's exit status (`RunExitStatus`, shared with `ab`'s reading of its children).
    static func exitStatus(verdict: Verdict, stopReason: String) -> ExitStatus {
        ExitStatus(rawValue: RunExitStatus(verdict: verdict, stopReason: stopReason).rawValue) ?? .failure
    }

    /// `options` resolved for `definition` with this process's environment, terminal and command
    /// line (`RunOptionsResolver`); warnings go to stderr, problems become one `ValidationError`.
    /// `run` and `capacity` both resolve their options here.
    static func resolve(_ options: RunOptions, environment: ConnectionDefaults, definition: RunDefinition) throws -> ResolvedRun {
        let context = RunOptionsContext(
            server: environment.server, domain: environment.domain, password: environment.password, accounts: environment.accounts,
            environment: ProcessInfo.processInfo.environment, now: Date(), terminal: isatty(STDOUT_FILENO) != 0,
            commandLine: CommandLine.arguments, processors: ProcessInfo.processInfo.activeProcessorCount)
        do {
            let resolved = try RunOptionsResolver(options: options, context: context).resolve(definition)
            for warning in resolved.warnings { FileHandle.standardError.write(Data("xmppload: warning: \(warning)\n".utf8)) }
            return resolved
        } catch {
            throw ValidationError(error.description)
        }
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
}
