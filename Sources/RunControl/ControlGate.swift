import Foundation
import LoadEngine
import NIOHTTP1
import Synchronization

/// The control port's door: every request passes `ControlAuthorization` before the hub sees it.
/// A refused one is answered 401 (`WWW-Authenticate: Bearer`, a JSON `error`) and logged — method,
/// path without its query, sender and reason, never the token or what was presented.
///
/// The log is bounded: the first `loggedInFull` refusals get a line each, then one line per
/// `summaryEvery` more, with the count so far, so a flood of requests cannot flood stderr.
/// Thread safety: requests arrive on several loops; the count is behind a `Mutex`.
final class ControlGate: Sendable {
    private let token: ControlToken
    private let log: @Sendable (String) -> Void
    private let refusals = Mutex(0)

    /// Refusals logged one line each.
    static let loggedInFull = 20
    /// After those, one line per this many.
    static let summaryEvery = 100

    init(token: ControlToken, log: @escaping @Sendable (String) -> Void) {
        self.token = token
        self.log = log
    }

    /// How many requests were refused so far.
    var refusedCount: Int { refusals.withLock { $0 } }

    /// `respond(request)` when the request carries the token; else the 401, logged.
    func answer(_ request: SmallHTTPServer.Request, respond: (SmallHTTPServer.Request) -> SmallHTTPServer.Reply) -> SmallHTTPServer.Reply {
        let decision = ControlAuthorization.decide(header: request.header("Authorization"), token: token)
        guard case .refused(let reason) = decision else { return respond(request) }
        let count = refusals.withLock { count -> Int in
            count += 1
            return count
        }
        if count <= Self.loggedInFull || count % Self.summaryEvery == 0 {
            log(
                "control port: refused \(Self.printable(request.method, 16)) \(Self.printable(Self.path(request.uri), 80))"
                    + " from \(request.remoteAddress ?? "an unknown sender") (401: \(reason.rawValue))"
                    + (count == Self.loggedInFull ? "; further refusals are logged once per \(Self.summaryEvery)" : "")
                    + (count > Self.loggedInFull ? "; \(count) refused so far" : ""))
        }
        var reply = ControlHub.json(
            .unauthorized,
            [
                "error":
                    "\(reason.rawValue): every request needs `Authorization: Bearer TOKEN` with the run's token (`xmppload control` reads it from the results directory's \(ControlToken.fileName), or --token-file FILE)",
                "status": 401,
            ])
        reply.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"xmppload-control\""))
        return reply
    }

    /// The URI without its query (a token put there must not reach the log).
    static func path(_ uri: String) -> String {
        String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// `text` cut to `limit` characters, control characters as `?` (one log line per refusal).
    static func printable(_ text: String, _ limit: Int) -> String {
        let cleaned = String(text.unicodeScalars.prefix(limit).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return text.unicodeScalars.count > limit ? cleaned + "…" : cleaned
    }
}
