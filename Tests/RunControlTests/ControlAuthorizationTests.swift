import Foundation
import Synchronization
import Testing

@testable import LoadEngine
@testable import RunControl

/// The control port's door: which `Authorization` headers let a request in (a table), and what a
/// refused request gets (401, `WWW-Authenticate`) and leaves in the log (never the token).
@Suite struct ControlAuthorizationTests {
    static let token = ControlToken("0123456789abcdef0123456789abcdef")!

    struct Row: Sendable, CustomTestStringConvertible {
        var header: String?
        var expected: ControlAuthorization
        var testDescription: String { header.map { "Authorization: \($0)" } ?? "no header" }
    }

    static let rows: [Row] = [
        Row(header: "Bearer 0123456789abcdef0123456789abcdef", expected: .allowed),
        Row(header: "bearer 0123456789abcdef0123456789abcdef", expected: .allowed),
        Row(header: "BEARER   0123456789abcdef0123456789abcdef  ", expected: .allowed),
        Row(header: nil, expected: .refused(.missing)),
        Row(header: "", expected: .refused(.notBearer)),
        Row(header: "Bearer", expected: .refused(.notBearer)),
        Row(header: "Bearer ", expected: .refused(.notBearer)),
        Row(header: "Bearer    ", expected: .refused(.notBearer)),
        Row(header: "Basic dXNlcjpwYXNz", expected: .refused(.notBearer)),
        Row(header: "Bearer0123456789abcdef0123456789abcdef", expected: .refused(.notBearer)),
        Row(header: "0123456789abcdef0123456789abcdef", expected: .refused(.notBearer)),
        Row(header: "Bearer 0123456789abcdef0123456789abcdee", expected: .refused(.wrongToken)),
        Row(header: "Bearer 0123456789abcdef0123456789abcde", expected: .refused(.wrongToken)),
        Row(header: "Bearer 0123456789abcdef0123456789abcdef0", expected: .refused(.wrongToken)),
        Row(header: "Bearer 0123456789ABCDEF0123456789ABCDEF", expected: .refused(.wrongToken)),
        Row(header: "Bearer x", expected: .refused(.wrongToken)),
        Row(header: "Bearer 0123456789abcdef 0123456789abcdef", expected: .refused(.wrongToken)),
    ]

    @Test(arguments: rows)
    func decide(_ row: Row) {
        #expect(ControlAuthorization.decide(header: row.header, token: Self.token) == row.expected)
    }

    /// Collects the gate's log lines.
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func request(_ method: String, _ uri: String, authorization: String?) -> SmallHTTPServer.Request {
        SmallHTTPServer.Request(
            method: method, uri: uri, headers: authorization.map { [(name: "authorization", value: $0)] } ?? [], body: [],
            remoteAddress: "127.0.0.1:40000")
    }

    @Test func aRefusedRequestIsAnswered401AndLoggedWithoutTheToken() {
        let log = Log()
        let gate = ControlGate(token: Self.token, log: { log.append($0) })
        var reached: [String] = []
        func send(_ method: String, _ uri: String, _ authorization: String?) -> SmallHTTPServer.Reply {
            gate.answer(Self.request(method, uri, authorization: authorization)) {
                reached.append($0.uri)
                return SmallHTTPServer.Reply(text: "ok")
            }
        }
        let allowed = send("POST", "/stop", "Bearer \(Self.token.text)")
        #expect(allowed.status == .ok && reached == ["/stop"])
        let missing = send("POST", "/stop", nil)
        #expect(missing.status == .unauthorized)
        #expect(missing.headers.contains { $0.name == "WWW-Authenticate" && $0.value.hasPrefix("Bearer") })
        let body = String(decoding: missing.body, as: UTF8.self)
        #expect(body.contains("no Authorization header") && body.contains("\"status\" : 401"), "\(body)")
        // A wrong token, a token in the query string, an unknown path: all refused, none reaches the hub.
        let guess = "Bearer 0123456789abcdef0123456789abcdee"
        #expect(send("POST", "/load", guess).status == .unauthorized)
        #expect(send("GET", "/status?token=\(Self.token.text)", nil).status == .unauthorized)
        #expect(send("GET", "/nope", "Basic eDp5").status == .unauthorized)
        #expect(reached == ["/stop"] && gate.refusedCount == 4)
        #expect(
            log.all == [
                "control port: refused POST /stop from 127.0.0.1:40000 (401: no Authorization header)",
                "control port: refused POST /load from 127.0.0.1:40000 (401: wrong token)",
                "control port: refused GET /status from 127.0.0.1:40000 (401: no Authorization header)",
                "control port: refused GET /nope from 127.0.0.1:40000 (401: the Authorization header is not `Bearer TOKEN`)",
            ])
        #expect(log.all.allSatisfy { !$0.contains(Self.token.text) && !$0.contains("abcdee") && !$0.contains("eDp5") })
    }

    /// A flood of refused requests: every one answered 401, the log bounded.
    @Test func aFloodOfRefusalsKeepsTheLogShort() {
        let log = Log()
        let gate = ControlGate(token: Self.token, log: { log.append($0) })
        for _ in 0..<1_000 {
            #expect(gate.answer(Self.request("GET", "/status\u{1B}[2J", authorization: nil)) { _ in .init(text: "ok") }.status == .unauthorized)
        }
        #expect(gate.refusedCount == 1_000)
        // 20 in full, then one per 100 (the 100th, 200th, … 1000th).
        #expect(log.all.count == ControlGate.loggedInFull + 10, "\(log.all.count)")
        #expect(log.all[ControlGate.loggedInFull - 1].hasSuffix("further refusals are logged once per 100"))
        #expect(log.all.last?.hasSuffix("; 1000 refused so far") == true)
        #expect(log.all.allSatisfy { !$0.contains("\u{1B}") }, "control characters are not written to the terminal")
    }
}
