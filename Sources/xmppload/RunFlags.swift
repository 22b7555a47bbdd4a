import ArgumentParser
import LoadEngine
import LoadProfile
import LoadRunners

// The options `run` and `capacity` share: the server, accounts, TLS and SASL, results and the engine.

/// The flags of a load run that do not choose the load itself (`--sessions`, `--rate`, … stay with
/// `run`; `capacity` searches the load): one `@OptionGroup` shared by `run` and `capacity`, so the two
/// commands read connection details, accounts and engine settings the same way (`options(load:)`, then
/// `RunCommand.resolve`).
struct RunFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A server c2s endpoint or ws/wss/http/https URL; repeat for a cluster (sessions spread by weight). Replaces the profile's `servers:`.",
            valueName: "HOST:PORT[,weight=W]"))
    var server: [String] = []

    @Option(
        help: ArgumentHelp("The DNS server for SRV discovery when no --server is given (default: /etc/resolv.conf's first).", valueName: "HOST:PORT"))
    var dns: String?

    @Option(help: ArgumentHelp("Bind outgoing connections to these local addresses, round robin.", valueName: "LIST|FIRST-LAST"))
    var source: String?

    @Option(name: .customLong("var"), help: ArgumentHelp("Override a variable of the profile's `variables:` (repeatable).", valueName: "KEY=VALUE"))
    var variables: [String] = []

    @Option(help: ArgumentHelp("Start the load at this time: RFC 3339 (2026-11-23T11:00:00Z) or +DURATION (+30s).", valueName: "TIME"))
    var startAt: String?

    @Option(help: ArgumentHelp("The run's identifier (shared by the generators of one run): letters, digits, '.', '_', '-'.", valueName: "ID"))
    var runId: String?

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

    @Option(
        help:
            "TLS: starttls (default; a server that does not offer it fails with tls-not-offered), direct (e.g. port 5223) or none (plaintext, explicit)."
    )
    var tls: String?

    @Flag(help: "Accept self-signed or otherwise unverifiable server certificates (lab servers).")
    var insecure = false

    @Option(
        help:
            "Force a SASL mechanism: SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1 (each also -PLUS: bound to the TLS channel), PLAIN, ANONYMOUS. Default: the strongest offered, -PLUS where the server advertises a channel-binding type this connection has."
    )
    var sasl: String?

    @Option(
        help:
            "Login protocol: auto (SASL2 with Bind2 and FAST tokens where the server offers them; default), classic (RFC 6120 SASL and resource bind) or sasl2 (always; sasl2-not-offered without it). Overrides the profiles' login: {mode: …}."
    )
    var login: String?

    @Option(help: "Seed for think times, choices and targets (reproducible runs).")
    var seed: UInt64?

    @Option(
        help: ArgumentHelp(
            "Run generator i of N (0-based): arrivals n with n mod N = i and the i-th of N blocks of --accounts; N generators together run the plan once. Merge their results with `xmppload report DIR...`.",
            valueName: "i/N"))
    var segment: String?

    @Option(help: "Results directory (default results/<timestamp>-<profile>); one that holds a run is refused.")
    var out: String?

    @Flag(help: "Replace the run already in --out.")
    var overwrite = false

    @Option(help: "Snapshot interval (e.g. 5s).")
    var interval: String = "5s"

    @Option(help: "Serve Prometheus metrics on this port of --metrics-host.")
    var metricsPort: Int?

    @Option(help: "The address the metrics endpoint listens on (0.0.0.0 in a pod, for Prometheus to scrape).")
    var metricsHost: String = "127.0.0.1"

    @Option(help: "Event loops (threads); default: one per core.")
    var loops: Int?

    @Option(help: "An arrival this late is dropped, not started.")
    var maxLateness: String = "1s"

    @Option(help: "After the load stops, sessions stay online up to this long for messages in flight; then missing ones count as lost.")
    var messageGrace: String = "5s"

    @Flag(help: "Plain progress lines even on a terminal.")
    var plain = false

    @Option(
        help: ArgumentHelp(
            "Deliberate churn: drop R online sessions per second across the run (e.g. 5/s or 300/m) while the load runs; each reconnects (back-off of its reconnect policy) and logs in again, timed. Soaks the server's login path. Replaces the file's churn: key.",
            valueName: "R"))
    var churn: String?

    @Option(
        help:
            "A session whose socket stops draining (the server stopped reading) for this long ends with write-stalled; its program pauses meanwhile.")
    var writeStall: String = "30s"

    @Option(
        help: ArgumentHelp(
            "Look the server names up again every D during the run (off the event loops), so a DNS change during a long soak is followed; 0 turns it off. IP literals are never looked up again.",
            valueName: "D"))
    var resolveEvery: String = "5m"

    @Option(
        help: ArgumentHelp(
            "After a logged-in session loses its connection (server restart, reset, stream error), reconnect up to N times in a row with exponential back-off and full jitter; 0 never. Overrides the profiles' `reconnect:` attempts.",
            valueName: "N"))
    var reconnect: Int?

    @Option(help: "A name for what this run measured (e.g. prosody-0.12.4), recorded in the manifest; `compare` shows it.")
    var label: String?

    @Option(help: ArgumentHelp("A free key=value recorded in the manifest (e.g. build=4.9.2, gc=g1); repeatable.", valueName: "key=value"))
    var tag: [String] = []

    @Option(
        help: ArgumentHelp(
            "Watch the server beside the load, every interval: a local process by PID or name (/proc: CPU, memory, threads, descriptors) or a Prometheus/OpenMetrics endpoint (keep=SERIES,… chooses series); repeatable. Gives summary.json's monitors, server_costs and limited_by (docs/MONITORING.md).",
            valueName: "[LABEL=]process:PID|process:NAME|prometheus:URL"))
    var monitor: [String] = []

    @OptionGroup(title: "Limits on what a session accepts from the server")
    var hardening: HardeningOptions
}

extension RunFlags {
    /// These flags and the load as plain values, for `RunOptionsResolver`.
    func options(load: LoadFlags) -> RunOptions {
        var options = RunOptions()
        options.servers = server
        options.dns = dns
        options.source = source
        options.variables = variables
        options.startAt = startAt
        options.runID = runId
        options.domain = domain
        options.accounts = accounts
        options.accountPrefix = accountPrefix
        options.password = password
        options.passwordFile = passwordFile
        options.serverEnv = serverEnv
        options.tls = tls
        options.insecure = insecure
        options.sasl = sasl
        options.login = login
        options.seed = load.seed
        options.segment = segment
        options.out = out
        options.overwrite = overwrite
        options.interval = interval
        options.metricsPort = metricsPort
        options.metricsHost = metricsHost
        options.loops = loops
        options.maxLateness = maxLateness
        options.messageGrace = messageGrace
        options.plain = plain
        options.churn = churn
        options.writeStall = writeStall
        options.resolveEvery = resolveEvery
        options.reconnect = reconnect
        options.label = label
        options.tags = tag
        options.limits = hardening.values
        options.monitors = monitor
        options.sessions = load.sessions
        options.ramp = load.ramp
        options.rate = load.rate
        options.duration = load.duration
        return options
    }
}
