import ArgumentParser
import Foundation
import LoadEngine
import LoadRunners
import ServerProbe
import XMPPCore

/// `xmppload probe`: connects once to a server (and logs in when an account is given), prints what
/// it offers and how it behaves, and the profile settings that implies (`ServerProbe`,
/// `ProbeReport`); `--json` writes the same as server.json (docs/PROBE.md).
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Connect once and report what the server offers and how it behaves.",
        discussion: """
            The first thing to run against an unknown server. Example:
              xmppload probe --server 127.0.0.1:5222 --domain load.test --account user1 \\
                  --password-file pw.txt --insecure --json server.json
            Without --account the probe stops where SASL would begin (stream features, TLS and
            certificate, SASL mechanisms, in-band registration and its form). With an account it logs
            in and also asks disco#info, disco#items (MUC service), software version, ping and entity
            time, sends initial presence and waits up to 2 s for its echo, and closes the stream.
            The password comes from --password-file or XMPPLOAD_PASSWORD.
            Exit codes: 0 the probe ran, 1 it could not connect or log in (phase, kind and hint
            printed), 2 usage error.
            """
    )

    @Option(help: "The server's c2s address, HOST:PORT.") var server: String
    @Option(help: "The XMPP domain.") var domain: String
    @Option(help: "Log in as this account (local part, or user@domain) to probe past SASL.") var account: String?
    @Option(help: "Read the account's password from the first line of this file (or set XMPPLOAD_PASSWORD).") var passwordFile: String?
    @Option(help: "TLS: starttls (default), direct or none.") var tls: String = "starttls"
    @Flag(help: "Accept a certificate that does not verify (the probe still says whether it would).") var insecure = false
    @Option(help: "Force this SASL mechanism for the login (-PLUS ones bind to the TLS channel).") var sasl: String?
    @Option(help: "Login protocol: auto (SASL2 where offered, default), classic or sasl2.") var login: String = "auto"
    @Option(help: "Also write the report as JSON to this file (server.json).") var json: String?

    func run() async throws {
        var problems: [String] = []
        let address = RunOptionsResolver.parseServer(server)
        if address == nil { problems.append("--server must be HOST:PORT, got '\(server)'") }
        if domain.isEmpty { problems.append("--domain must not be empty") }
        let tlsMode = TLSMode(rawValue: tls)
        if tlsMode == nil { problems.append("--tls must be starttls, direct or none, got '\(tls)'") }
        let mechanism = sasl.flatMap(SASLMechanism.init(name:))
        if let sasl, mechanism == nil {
            problems.append(
                "--sasl: unknown mechanism '\(sasl)' (xmppload speaks SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1 and their -PLUS, PLAIN)")
        }
        let loginMode = LoginMode(rawValue: login)
        if loginMode == nil { problems.append("--login must be auto, classic or sasl2, got '\(login)'") }
        if let account, account.isEmpty || account.hasPrefix("@") { problems.append("--account must name a user, got '\(account)'") }
        var password: String?
        if account != nil {
            password = RunOptionsResolver.resolvePassword(
                flag: nil, file: passwordFile, environment: ProcessInfo.processInfo.environment["XMPPLOAD_PASSWORD"], problems: &problems)
            if password == nil && problems.isEmpty {
                problems.append("--account needs a password: --password-file FILE or XMPPLOAD_PASSWORD")
            }
        } else if passwordFile != nil {
            problems.append("--password-file needs --account")
        }
        guard problems.isEmpty, let (host, port) = address, let tlsMode else {
            throw ValidationError(problems.joined(separator: "\n"))
        }
        var options = ServerProbe.Options(
            host: host, port: port, domain: domain, username: account, password: password, tls: tlsMode, insecure: insecure)
        options.mechanism = mechanism
        options.login = loginMode ?? .auto
        let report = await ServerProbe.run(options)
        Console.print(report.text(), terminator: "")
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                try (try encoder.encode(report) + Data("\n".utf8)).write(to: URL(fileURLWithPath: json))
            } catch {
                FileHandle.standardError.write(Data("cannot write --json \(json): \(error)\n".utf8))
                throw ExitCode(ExitStatus.failure.rawValue)
            }
        }
        if report.failure != nil { throw ExitCode(ExitStatus.failure.rawValue) }
    }
}
