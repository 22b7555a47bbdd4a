import Foundation
import LoadEngine
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// Runs `xmppload probe`: one connection to one server, one step after the other — connect, stream
/// features, TLS, SASL offer, registration form, login (the run's `LoginMachine`), then disco#info,
/// disco#items (and each item's disco#info, to find the MUC service), XEP-0092 version, XEP-0199
/// ping, XEP-0202 time (five queries, `ClockOffset.estimate`), initial presence and its echo, and
/// the stream close — and returns what it saw as a `ProbeReport`.
///
/// Every wait is bounded (`Options`): a silent server makes the probe slower, never stuck. Without an
/// account the probe stops where SASL would begin. It never fails by throwing: a connection or login
/// failure is the report's `failure` (phase, kind, detail, hint).
public enum ServerProbe {
    /// What to probe and how long to wait.
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        public var domain: String
        /// The account's local part (a full `user@domain` is cut at `@`); nil: do not log in.
        public var username: String?
        public var password: String?
        public var tls: TLSMode
        public var insecure: Bool
        /// Force this SASL mechanism for the login (`--sasl`; `-PLUS` ones bind to the connection).
        public var mechanism: SASLMechanism?
        /// Which login protocol to use (`--login`): `auto` takes SASL2 where offered. With a FAST
        /// token issued, the probe logs in a second time with it (`modern_login.fast_login`).
        public var login: LoginMode = .auto
        /// Log in with this FAST token instead of asking for one (the probe's re-login uses it; so do
        /// the pipeline tests that replay a recorded FAST login).
        var fastToken: FASTToken?
        /// Connect timeout.
        public var connectTimeout: TimeAmount = .seconds(10)
        /// Each login phase and each query waits at most this long.
        public var replyTimeout: TimeAmount = .seconds(5)
        /// The presence echo is waited for at most this long (the presence step's own bound).
        public var presenceWait: TimeAmount = .seconds(2)

        public init(
            host: String, port: Int, domain: String, username: String? = nil, password: String? = nil,
            tls: TLSMode = .startTLS, insecure: Bool = false, mechanism: SASLMechanism? = nil
        ) {
            self.host = host
            self.port = port
            self.domain = domain
            self.username = username
            self.password = password
            self.tls = tls
            self.insecure = insecure
            self.mechanism = mechanism
        }
    }

    /// Probes the server on a one-thread event loop group of its own (shut down afterwards).
    public static func run(_ options: Options) async -> ProbeReport {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let report = await run(options, group: group)
        try? await group.shutdownGracefully()
        return report
    }

    /// Probes the server on one event loop of `group` and returns the report (with its implications).
    public static func run(_ options: Options, group: any EventLoopGroup) async -> ProbeReport {
        await run(options, group: group, connection: nil)
    }

    /// The probe over `connection` when given (a test's channel), else over a new connection made on
    /// `group`.
    static func run(_ options: Options, group: (any EventLoopGroup)?, connection: ProbeConnection?) async -> ProbeReport {
        let username = options.username.map { String($0.split(separator: "@", maxSplits: 1).first ?? "") }
        var report = ProbeReport(
            server: "\(options.host):\(options.port)", domain: options.domain,
            account: username.map { "\($0)@\(options.domain)" }, tlsMode: options.tls.rawValue,
            startedAt: ISO8601DateFormatter().string(from: Date()))
        var session = ProbeSession(options: options, username: username)
        do {
            if let connection {
                try await session.run(into: &report, over: connection, connectMilliseconds: 0)
            } else if let group {
                try await session.run(into: &report, group: group)
            }
        } catch let abort as ProbeAbort {
            report.failure = ProbeReport.Failure(
                phase: abort.phase, kind: abort.kind, detail: abort.detail,
                hint: Self.hint(kind: abort.kind, phase: abort.phase, options: options))
        } catch {
            report.failure = ProbeReport.Failure(phase: session.phase, kind: "other", detail: "\(error)")
        }
        await session.close()
        report.implications = report.impliedSettings()
        return report
    }

    /// What to do about a failure: the run's own hint for the kind (`ErrorHint`), else the probe's.
    static func hint(kind: String, phase: String, options: Options) -> String? {
        switch kind {
        case "sasl-not-authorized":
            return
                "wrong password, or no such account: check --account and the password (--password-file, XMPPLOAD_PASSWORD); `xmppload provision` creates accounts"
        case "connect-refused":
            return "nothing listens at \(options.host):\(options.port): check --server (client port: 5222 for STARTTLS, 5223 for direct TLS)"
        case "stream-host-unknown":
            return "the server does not serve the domain \(options.domain): check --domain (the XMPP domain, not the host name)"
        case "tls" where options.tls == .direct, "connection-closed" where options.tls == .direct && phase == "tls":
            return "the TLS handshake failed: if the port speaks STARTTLS (e.g. 5222), use --tls starttls"
        case "timeout-login" where phase == "tls" && options.tls == .direct:
            return "no TLS handshake: the port may speak STARTTLS; try --tls starttls"
        default:
            if let hint = ErrorHint.hint(for: kind) { return hint }
            if kind.hasPrefix("xml-") && options.tls != .direct {
                return "the server did not speak XMPP: if the port expects TLS from the first byte (e.g. 5223), use --tls direct"
            }
            if kind == "timeout-login" { return "the server did not answer in time at \(phase)" }
            return nil
        }
    }
}

/// Ends the probe: in `phase`, with the typed `kind` and a detail for people.
struct ProbeAbort: Error {
    var phase: String
    var kind: String
    var detail: String
}
