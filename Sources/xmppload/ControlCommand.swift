import ArgumentParser
import Foundation
import LoadEngine
import RunControl

/// `xmppload control HOST:PORT status | rate R | sessions N | pause | resume | stop`: steers a run
/// started with `--control-port` and prints the run's answer; a refusal is printed and exits 1.
/// Every request carries the run's token (`ControlTokenLocator` says where it is found).
struct ControlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Steer a running test through its --control-port.",
        discussion: """
            Examples:
              xmppload control 127.0.0.1:9300 status
              xmppload control 127.0.0.1:9300 rate 40 --over 30s      (open model: arrivals per second)
              xmppload control 127.0.0.1:9300 sessions 500 --over 1m  (closed model: concurrent sessions)
              xmppload control 127.0.0.1:9300 pause                   (no new arrivals until resume)
              xmppload control 127.0.0.1:9300 resume
              xmppload control 127.0.0.1:9300 stop                    (graceful, as Ctrl-C: results written)
            Every request carries the run's token: the run writes a fresh one to RESULTS/control-token
            (readable by you only) and removes it when it ends, or uses the one given with
            --control-token-file. This command reads --token-file FILE, else RESULTS/control-token of
            --results RESULTS, else the newest run under ./results that serves that port.
            Every change is recorded in intervals.jsonl, summary.json (control_events) and report.html.
            """
    )

    @Argument(help: "The run's control port, HOST:PORT (e.g. 127.0.0.1:9300).")
    var address: String

    @Argument(help: "status | rate | sessions | pause | resume | stop")
    var action: String

    @Argument(help: "rate: sessions per second; sessions: concurrent sessions.")
    var value: String?

    @Option(help: "rate, sessions: reach the new load linearly over this long (e.g. 30s; default: at once).")
    var over: String?

    @Flag(help: "Print the run's JSON answer as it came.")
    var json = false

    @Option(help: "The file holding the run's control token (the run's RESULTS/control-token, or its --control-token-file).")
    var tokenFile: String?

    @Option(help: "The run's results directory (--out): its control-token is used.")
    var results: String?

    func run() async throws {
        let (host, port) = try Self.endpoint(address)
        let (method, path, body) = try Self.request(action: action, value: value, over: over)
        let found: ControlTokenLocator.Found
        do {
            found = try ControlTokenLocator.locate(port: port, tokenFile: tokenFile, resultsDirectory: results)
        } catch {
            FileHandle.standardError.write(Data("xmppload control: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let answer: ControlClient.Answer
        do {
            answer = try await ControlClient.send(host: host, port: port, method: method, path: path, json: body, token: found.token)
        } catch {
            FileHandle.standardError.write(Data("xmppload control: \(error)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]
        guard (200..<300).contains(answer.status) else {
            var message = object?["error"] as? String ?? answer.body.trimmingCharacters(in: .whitespacesAndNewlines)
            if answer.status == 401 { message += " (the token sent came from \(found.path))" }
            FileHandle.standardError.write(Data("xmppload control: refused (\(answer.status)): \(message)\n".utf8))
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        Console.print(json || object == nil ? answer.body.trimmingCharacters(in: .whitespacesAndNewlines) : Self.render(object ?? [:]))
    }

    /// `HOST:PORT` (IPv6 as `[::1]:PORT`).
    static func endpoint(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            throw ValidationError("the control port must be HOST:PORT (e.g. 127.0.0.1:9300), got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// The HTTP method, path and JSON body for an action.
    static func request(action: String, value: String?, over: String?) throws -> (String, String, String?) {
        func noValue() throws {
            if let value { throw ValidationError("\(action) takes no value, got '\(value)'") }
            if over != nil { throw ValidationError("--over goes with rate or sessions, not \(action)") }
        }
        let overField = over.map { ", \"over\": \"\($0.replacingOccurrences(of: "\"", with: ""))\"" } ?? ""
        switch action {
        case "status":
            try noValue()
            return ("GET", "/status", nil)
        case "pause", "resume", "stop":
            try noValue()
            return ("POST", "/\(action)", nil)
        case "rate":
            guard let value, let rate = Double(value), rate.isFinite else {
                throw ValidationError("rate needs a number of sessions per second, e.g. 'rate 40'")
            }
            return ("POST", "/load", "{\"rate\": \(rate)\(overField)}")
        case "sessions":
            guard let value, let sessions = Int(value) else { throw ValidationError("sessions needs a whole number, e.g. 'sessions 500'") }
            return ("POST", "/load", "{\"sessions\": \(sessions)\(overField)}")
        default:
            throw ValidationError("unknown action '\(action)': status, rate R, sessions N, pause, resume or stop")
        }
    }

    /// The answer as aligned `key  value` lines; `last_interval` as an indented block.
    static func render(_ object: [String: Any]) -> String {
        var lines: [String] = []
        if let accepted = object["accepted"] as? String { lines.append("accepted: \(accepted)") }
        let order = [
            "phase", "model", "elapsed_s", "rate_asked", "rate_achieved", "target_sessions", "online", "live_sessions", "paused",
            "controlled", "control_events", "max_sessions",
        ]
        // JSON's true/false come back as numbers on Linux: the two yes/no keys are said as such.
        func text(_ value: Any, key: String = "") -> String {
            if key == "paused" || key == "controlled", let flag = value as? Bool { return flag ? "yes" : "no" }
            return "\(value)"
        }
        for key in order + object.keys.filter({ !order.contains($0) && $0 != "accepted" && $0 != "last_interval" }).sorted() {
            guard let value = object[key] else { continue }
            lines.append(key.padding(toLength: 16, withPad: " ", startingAt: 0) + text(value, key: key))
        }
        if let last = object["last_interval"] as? [String: Any] {
            lines.append("last interval")
            for key in last.keys.sorted() {
                lines.append("  " + key.padding(toLength: 18, withPad: " ", startingAt: 0) + text(last[key]!))
            }
        }
        return lines.joined(separator: "\n")
    }
}
