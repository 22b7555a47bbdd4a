import Foundation
import LoadEngine
import LoadProfile

/// What a control-port request asks, parsed from its method, path and JSON body, and checked
/// against what the run can do (`ControlLimits`) — pure values, so both are tested with tables.
///
/// | request | body | meaning |
/// |---|---|---|
/// | `GET /status` | – | the run's state |
/// | `POST /load` | `{"rate": R, "over": "30s"}` or `{"sessions": N, "over": "30s"}` | the new load, ramped over `over` (default 0: at once) |
/// | `POST /pause`, `/resume` | – (or `{}`) | stop / restart arrivals |
/// | `POST /stop` | – (or `{}`) | graceful stop, as SIGINT |
public enum ControlRequest: Sendable, Equatable {
    case status
    case load(LoadChange)
    case pause
    case resume
    case stop

    /// `POST /load`'s body: exactly one of `rate` (sessions per second, open model) and `sessions`
    /// (concurrent sessions, closed model), and the ramp's length in seconds.
    public struct LoadChange: Sendable, Equatable {
        public var rate: Double?
        public var sessions: Int?
        public var over: Double

        public init(rate: Double? = nil, sessions: Int? = nil, over: Double = 0) {
            self.rate = rate
            self.sessions = sessions
            self.over = over
        }
    }

    /// The longest ramp `over` accepts (a day).
    public static let maxOver = 86_400.0

    /// Parses one request; throws the refusal to answer (status 400, 404 or 405, and why).
    public static func parse(method: String, uri: String, body: [UInt8]) throws(ControlRefusal) -> ControlRequest {
        let path = String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let known = ["/status": "GET", "/load": "POST", "/pause": "POST", "/resume": "POST", "/stop": "POST"]
        guard let expected = known[path] else {
            throw ControlRefusal(404, "no such endpoint '\(path)': try GET /status, POST /load, /pause, /resume or /stop")
        }
        guard method == expected else { throw ControlRefusal(405, "\(path) takes \(expected), not \(method)") }
        switch path {
        case "/status": return .status
        case "/load": return .load(try loadChange(body))
        default:
            let object = try jsonObject(body, allowEmpty: true)
            if let key = object.keys.sorted().first { throw ControlRefusal(400, "unknown field '\(key)': \(path) takes no fields") }
            switch path {
            case "/pause": return .pause
            case "/resume": return .resume
            default: return .stop
            }
        }
    }

    static func loadChange(_ body: [UInt8]) throws(ControlRefusal) -> LoadChange {
        let object = try jsonObject(body, allowEmpty: false)
        if let unknown = object.keys.filter({ !["rate", "sessions", "over"].contains($0) }).sorted().first {
            throw ControlRefusal(400, "unknown field '\(unknown)': /load takes rate or sessions, and over")
        }
        var change = LoadChange()
        switch (object["rate"], object["sessions"]) {
        case (nil, nil): throw ControlRefusal(400, "/load needs \"rate\" (sessions per second) or \"sessions\" (concurrent sessions)")
        case (.some, .some): throw ControlRefusal(400, "/load takes \"rate\" or \"sessions\", not both")
        case (let rate?, nil):
            guard let value = number(rate), value.isFinite else { throw ControlRefusal(400, "\"rate\" must be a number, got \(describe(rate))") }
            guard value >= 0 else { throw ControlRefusal(422, "\"rate\" must not be negative, got \(format(value))") }
            change.rate = value
        case (nil, let sessions?):
            guard let value = number(sessions), value.isFinite, value == value.rounded(), abs(value) < 1e12 else {
                throw ControlRefusal(400, "\"sessions\" must be a whole number, got \(describe(sessions))")
            }
            guard value >= 0 else { throw ControlRefusal(422, "\"sessions\" must not be negative, got \(Int(value))") }
            change.sessions = Int(value)
        }
        if let over = object["over"] {
            let seconds: Double?
            if case .string(let text) = over {
                seconds = DurationText.parse(text)?.seconds
            } else {
                seconds = number(over).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
            }
            guard let seconds else {
                throw ControlRefusal(400, "\"over\" must be a duration (\"30s\", \"2m\") or seconds, got \(describe(over))")
            }
            guard seconds <= maxOver else { throw ControlRefusal(422, "\"over\" must be at most 24h, got \(describe(over))") }
            change.over = seconds
        }
        return change
    }

    private static func jsonObject(_ body: [UInt8], allowEmpty: Bool) throws(ControlRefusal) -> [String: JSONValue] {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if allowEmpty { return [:] }
            throw ControlRefusal(400, "the body must be a JSON object, e.g. {\"rate\": 40, \"over\": \"30s\"}")
        }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw ControlRefusal(400, "the body is not a JSON object: \(String(decoding: body.prefix(80), as: UTF8.self))")
        }
        return object
    }

    /// One JSON value of a request's body, as far as the control port cares.
    enum JSONValue: Decodable, CustomStringConvertible {
        case number(Double)
        case string(String)
        case bool(Bool)
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }

        var description: String {
            switch self {
            case .number(let value): return ControlRequest.format(value)
            case .string(let text): return "\"\(text)\""
            case .bool(let value): return "\(value)"
            case .other: return "a list, object or null"
            }
        }
    }

    private static func number(_ value: JSONValue) -> Double? {
        if case .number(let number) = value { return number }
        return nil
    }

    private static func describe(_ value: JSONValue) -> String { value.description }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A request the control port refuses: the HTTP status (400 malformed, 404 unknown path, 405 wrong
/// method, 409 not now or not this model, 422 beyond what the plan can do) and why, for people.
public struct ControlRefusal: Error, Sendable, Equatable {
    public var status: Int
    public var message: String

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// What a run can be asked: its load model and how many sessions its accounts allow. `check`
/// refuses a `/load` the plan cannot do.
public struct ControlLimits: Sendable, Equatable {
    public var model: ControlState.Model
    /// Most concurrent sessions over the whole run (every generator's accounts).
    public var maxSessions: Int
    /// Where the limit comes from, for the refusal (`--accounts 1-100`).
    public var accountsText: String

    public init(model: ControlState.Model, maxSessions: Int, accountsText: String) {
        self.model = model
        self.maxSessions = maxSessions
        self.accountsText = accountsText
    }

    /// The new asked value (a rate or a number of sessions), or the refusal.
    public func check(_ change: ControlRequest.LoadChange) throws(ControlRefusal) -> Double {
        switch (model, change.rate, change.sessions) {
        case (.open, let rate?, _): return rate
        case (.closed, _, let sessions?):
            guard sessions <= maxSessions else {
                throw ControlRefusal(
                    422, "\(sessions) sessions asked, but the run has only \(maxSessions) accounts (\(accountsText)): each session needs its own")
            }
            return Double(sessions)
        case (.open, _, _):
            throw ControlRefusal(409, "the run's load model is open (arrivals per second): set \"rate\", not \"sessions\"")
        case (.closed, _, _):
            throw ControlRefusal(409, "the run's load model is closed (concurrent sessions): set \"sessions\", not \"rate\"")
        }
    }
}
