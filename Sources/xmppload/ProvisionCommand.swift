import ArgumentParser
import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import LoadRunners
import XMPPCore

/// `xmppload provision`: creates accounts <prefix>FROM..<prefix>TO over XMPP in-band registration
/// (XEP-0077), at most `--concurrency` at a time, optionally with mutual roster subscriptions between
/// neighbours (i ↔ i+1). Idempotent: an existing account (`conflict`) is counted as existed and then
/// logged in, so a wrong password shows up as failed.
///
/// Each account registers on one stream and logs in on a fresh one (`LoginMachine`'s
/// `.authenticateOnFreshStream`), on every server: jabberd2 2.7 answers no resource bind on a stream that
/// has just registered, so logging in on the same stream stalled every account at bind there, while a
/// fresh stream costs one more connect per account and works on Prosody, ejabberd and jabberd2 alike.
struct ProvisionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provision",
        abstract: "Create test accounts by in-band registration (XEP-0077), optionally with rosters.",
        discussion: """
            Example:
              xmppload provision --server 127.0.0.1:5222 --domain load.test --accounts 1-1000 \\
                  --password secret --concurrency 50 --rosters --insecure
            Works where the server allows in-band registration (Openfire by default; Prosody, ejabberd
            and jabberd2 when enabled); a server that does not advertise it fails with register-not-offered.
            Each account registers, then logs in on a fresh connection (jabberd2 binds nothing on a
            stream that has just registered).
            The password comes from --password, --password-file or XMPPLOAD_PASSWORD.
            Exit codes: 0 every account exists now, 1 some failed, 2 usage error.
            """
    )

    @Option(help: "The server's c2s address, HOST:PORT.") var server: String = "127.0.0.1:5222"
    @Option(help: "The XMPP domain.") var domain: String
    @Option(help: "Account numbers FROM-TO.") var accounts: String
    @Option(help: "Account name prefix.") var accountPrefix: String = "user"
    @Option(help: "Password of the accounts (prefer --password-file or XMPPLOAD_PASSWORD).") var password: String?
    @Option(help: "Read the accounts' password from the first line of this file.") var passwordFile: String?
    @Option(help: "Registrations in flight at most.") var concurrency: Int = 50
    @Flag(help: "Also make neighbours (i, i+1) mutual roster contacts.") var rosters = false
    @Option(help: "TLS: starttls (default), direct or none.") var tls: String = "starttls"
    @Flag(help: "Accept self-signed certificates.") var insecure = false
    @Option(help: "Where batch results go (default: a temporary directory, removed afterwards).") var out: String?

    func run() async throws {
        var problems: [String] = []
        let address = RunOptionsResolver.parseServer(server)
        if address == nil { problems.append("--server must be HOST:PORT, got '\(server)'") }
        let range = RunOptionsResolver.parseRange(accounts)
        if range == nil {
            problems.append("--accounts must be FROM-TO with 0 <= FROM <= TO <= \(RunOptionsResolver.maxAccountNumber), got '\(accounts)'")
        }
        if !(1...10_000).contains(concurrency) { problems.append("--concurrency must be 1 to 10000, got \(concurrency)") }
        let tlsPolicy = TLSMode(rawValue: tls)
        if tlsPolicy == nil { problems.append("--tls must be starttls, direct or none, got '\(tls)'") }
        let environment = try ConnectionDefaults.load(file: nil)
        let resolved = RunOptionsResolver.resolvePassword(
            flag: password, file: passwordFile, environment: environment.password,
            problems: &problems)
        if resolved == nil && problems.isEmpty {
            problems.append("a password is required: --password-file FILE, XMPPLOAD_PASSWORD or --password")
        }
        guard problems.isEmpty, let (host, port) = address, let range, let tlsPolicy, let password = resolved else {
            throw ValidationError(problems.joined(separator: "\n"))
        }
        let profile = try ProfileLoader.load(yaml: Self.profileYAML(rosters: rosters, prefix: accountPrefix, range: range), file: "provision")
        let base = out ?? FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-provision-\(UUID().uuidString.prefix(8))").path
        defer { if out == nil { try? FileManager.default.removeItem(atPath: base) } }

        var created: UInt64 = 0
        var existed: UInt64 = 0
        var failed: UInt64 = 0
        var errors: [String: UInt64] = [:]
        var first = range.lowerBound
        while first <= range.upperBound {
            let last = min(first + concurrency - 1, range.upperBound)
            let configuration = RunConfiguration(
                host: host, port: port, domain: domain, accounts: first...last,
                accountPrefix: accountPrefix, password: password, tls: tlsPolicy, insecure: insecure,
                outputDirectory: "\(base)/\(first)-\(last)", interval: .seconds(5))
            let summary = try await LoadRun(
                configuration: configuration, definition: profile,
                plan: .closed(sessions: last - first + 1, ramp: .zero, duration: nil)
            ).run().summary
            created += summary.accounts.created
            existed += summary.accounts.existed
            failed += summary.sessions.failed
            errors.merge(summary.errors, uniquingKeysWith: +)
            Console.print(
                "accounts \(accountPrefix)\(first)..\(last): created \(summary.accounts.created), existed \(summary.accounts.existed), failed \(summary.sessions.failed)"
            )
            first = last + 1
        }
        Console.print(
            "provisioned \(accountPrefix)\(range.lowerBound)..\(range.upperBound)@\(domain): created \(created), existed \(existed), failed \(failed)"
                + (errors.isEmpty ? "" : "; errors: " + errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
        if errors["register-not-offered", default: 0] > 0 {
            Console.print(
                "hint: the server does not advertise in-band registration (XEP-0077); enable it "
                    + "(Prosody: allow_registration = true; ejabberd: mod_register) or create the accounts another way")
        }
        if failed > 0 { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// Register, then (with rosters) add both ring neighbours, pre-approve them and ask for their
    /// presence: whichever of a pair logs in second completes the mutual ("both") subscription
    /// (Prosody and ejabberd support subscription pre-approval, RFC 6121 §3.4).
    static func profileYAML(rosters: Bool, prefix: String, range: ClosedRange<Int>) -> String {
        var steps = ["  - login: {register: true, resource: provision}"]
        if rosters && range.count > 1 {
            for neighbour in ["prev", "next"] {
                let jid = "\(prefix)${\(neighbour)_index}@${domain}"
                steps += [
                    "  - roster: {add: {jid: \"\(jid)\", name: \"\(prefix)${\(neighbour)_index}\"}}",
                    "  - presence: {to: \"\(jid)\", type: subscribed}",
                    "  - subscribe: \"\(jid)\"",
                ]
            }
            steps.append("  - think: 300ms")
        }
        steps.append("  - logout")
        return "name: provision\nvariables: {ring_first: \"\(range.lowerBound)\", ring_last: \"\(range.upperBound)\"}\nsteps:\n"
            + steps.joined(separator: "\n") + "\n"
    }
}
