import Testing

@testable import LoadEngine
@testable import RunControl

/// Control-port requests parsed from method, path and body, and checked against what the run can
/// do: every accepted shape and every refusal with its status.
@Suite struct ControlRequestTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var method: String
        var uri: String
        var body: String
        var expected: Result<ControlRequest, ControlRefusal>
        var testDescription: String { "\(method) \(uri) \(body)" }
    }

    static func refused(_ status: Int, _ fragment: String) -> Result<ControlRequest, ControlRefusal> {
        .failure(ControlRefusal(status, fragment))
    }

    static let rows: [Row] = [
        Row(method: "GET", uri: "/status", body: "", expected: .success(.status)),
        Row(method: "GET", uri: "/status?pretty", body: "", expected: .success(.status)),
        Row(method: "POST", uri: "/load", body: #"{"rate": 40, "over": "30s"}"#, expected: .success(.load(.init(rate: 40, over: 30)))),
        Row(method: "POST", uri: "/load", body: #"{"rate": 2.5}"#, expected: .success(.load(.init(rate: 2.5)))),
        Row(method: "POST", uri: "/load", body: #"{"rate": 0}"#, expected: .success(.load(.init(rate: 0)))),
        Row(method: "POST", uri: "/load", body: #"{"sessions": 500, "over": 60}"#, expected: .success(.load(.init(sessions: 500, over: 60)))),
        Row(method: "POST", uri: "/load", body: #"{"sessions": 10, "over": "1m30s"}"#, expected: .success(.load(.init(sessions: 10, over: 90)))),
        Row(method: "POST", uri: "/pause", body: "", expected: .success(.pause)),
        Row(method: "POST", uri: "/resume", body: "{}", expected: .success(.resume)),
        Row(method: "POST", uri: "/stop", body: "\n", expected: .success(.stop)),
        // Refusals.
        Row(method: "GET", uri: "/nope", body: "", expected: refused(404, "no such endpoint")),
        Row(method: "POST", uri: "/status", body: "", expected: refused(405, "takes GET")),
        Row(method: "GET", uri: "/load", body: "", expected: refused(405, "takes POST")),
        Row(method: "POST", uri: "/load", body: "", expected: refused(400, "must be a JSON object")),
        Row(method: "POST", uri: "/load", body: "rate=40", expected: refused(400, "not a JSON object")),
        Row(method: "POST", uri: "/load", body: "[40]", expected: refused(400, "not a JSON object")),
        Row(method: "POST", uri: "/load", body: #"{"over": "5s"}"#, expected: refused(400, "needs \"rate\"")),
        Row(method: "POST", uri: "/load", body: #"{"rate": 1, "sessions": 2}"#, expected: refused(400, "not both")),
        Row(method: "POST", uri: "/load", body: #"{"rate": 1, "speed": 2}"#, expected: refused(400, "unknown field 'speed'")),
        Row(method: "POST", uri: "/load", body: #"{"rate": -5}"#, expected: refused(422, "must not be negative")),
        Row(method: "POST", uri: "/load", body: #"{"rate": "40"}"#, expected: refused(400, "must be a number")),
        Row(method: "POST", uri: "/load", body: #"{"rate": true}"#, expected: refused(400, "must be a number")),
        Row(method: "POST", uri: "/load", body: #"{"sessions": 2.5}"#, expected: refused(400, "whole number")),
        Row(method: "POST", uri: "/load", body: #"{"sessions": -1}"#, expected: refused(422, "must not be negative")),
        Row(method: "POST", uri: "/load", body: #"{"rate": 5, "over": "soon"}"#, expected: refused(400, "\"over\" must be a duration")),
        Row(method: "POST", uri: "/load", body: #"{"rate": 5, "over": -3}"#, expected: refused(400, "\"over\" must be a duration")),
        Row(method: "POST", uri: "/load", body: #"{"rate": 5, "over": "2d"}"#, expected: refused(422, "at most 24h")),
        Row(method: "POST", uri: "/pause", body: #"{"now": true}"#, expected: refused(400, "unknown field 'now'")),
    ]

    @Test(arguments: rows)
    func parse(_ row: Row) {
        let result = Result { () throws(ControlRefusal) in
            try ControlRequest.parse(method: row.method, uri: row.uri, body: Array(row.body.utf8))
        }
        switch (result, row.expected) {
        case (.success(let got), .success(let want)): #expect(got == want)
        case (.failure(let got), .failure(let want)):
            #expect(got.status == want.status)
            #expect(got.message.contains(want.message), "\(got.message)")
        default: Issue.record("got \(result), expected \(row.expected)")
        }
    }

    struct LimitRow: CustomTestStringConvertible, Sendable {
        var name: String
        var model: ControlState.Model
        var change: ControlRequest.LoadChange
        var expected: Result<Double, ControlRefusal>
        var testDescription: String { name }
    }

    static let limitRows: [LimitRow] = [
        LimitRow(name: "open: a rate", model: .open, change: .init(rate: 40), expected: .success(40)),
        LimitRow(name: "closed: sessions within the accounts", model: .closed, change: .init(sessions: 100), expected: .success(100)),
        LimitRow(
            name: "closed: more sessions than accounts", model: .closed, change: .init(sessions: 101),
            expected: .failure(.init(422, "only 100 accounts"))),
        LimitRow(name: "open asked sessions", model: .open, change: .init(sessions: 10), expected: .failure(.init(409, "set \"rate\""))),
        LimitRow(name: "closed asked a rate", model: .closed, change: .init(rate: 10), expected: .failure(.init(409, "set \"sessions\""))),
    ]

    @Test(arguments: limitRows)
    func limits(_ row: LimitRow) {
        let limits = ControlLimits(model: row.model, maxSessions: 100, accountsText: "--accounts 1-100")
        let result = Result { () throws(ControlRefusal) in try limits.check(row.change) }
        switch (result, row.expected) {
        case (.success(let got), .success(let want)): #expect(got == want)
        case (.failure(let got), .failure(let want)):
            #expect(got.status == want.status)
            #expect(got.message.contains(want.message), "\(got.message)")
        default: Issue.record("got \(result), expected \(row.expected)")
        }
    }
}
