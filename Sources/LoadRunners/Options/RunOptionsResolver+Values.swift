// Reads the run options' single values (account ranges, passwords, tags, start times, run ids,
// server lists, thresholds) and derives what the verdict needs from the plan.
import Foundation
import LoadEngine
import LoadProfile
import LoadResults

extension RunOptionsResolver {
    /// `FIRST-LAST` with 0 <= FIRST <= LAST <= `maxAccountNumber`; nil otherwise.
    public static func parseRange(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]), let last = Int(parts[1]), first <= last, first >= 0,
            last <= maxAccountNumber
        else { return nil }
        return first...last
    }

    /// `HOST:PORT` (`[v6]:PORT` too) with a port 1-65535; nil otherwise.
    public static func parseServer(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// The password from `--password`, `--password-file` or XMPPLOAD_PASSWORD (in that order; at most
    /// one of the flags). A file gives its first line, without the line end.
    public static func resolvePassword(flag: String?, file: String?, environment: String?, problems: inout [String]) -> String? {
        if flag != nil && file != nil {
            problems.append("--password and --password-file are exclusive")
        }
        if let flag { return flag }
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                problems.append("--password-file: cannot read '\(file)'")
                return nil
            }
            let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let password = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            if password.isEmpty { problems.append("--password-file: '\(file)' starts with an empty line") }
            return password
        }
        return environment
    }

    /// `--tag key=value` pairs: the key is letters, digits, `.`, `_` or `-`; each key once.
    static func parseTags(_ arguments: [String], problems: inout [String]) -> [String: String] {
        var tags: [String: String] = [:]
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty,
                parts[0].allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) })
            else {
                problems.append("--tag must be key=value (key: letters, digits, . _ -), got '\(argument)'")
                continue
            }
            let key = String(parts[0])
            if tags[key] != nil { problems.append("--tag \(key) given twice") }
            tags[key] = String(parts[1])
        }
        return tags
    }

    /// RFC 3339 (`2026-11-23T11:00:00Z`, fractional seconds and offsets allowed) or `+DURATION`
    /// after `now`. A time more than a second in the past is a problem.
    static func parseStartAt(_ text: String, now: Date, problems: inout [String]) -> Date? {
        let date: Date
        if text.hasPrefix("+") {
            guard let wait = LoadFlags.duration(String(text.dropFirst()), flag: "--start-at", problems: &problems) else { return nil }
            let (seconds, attoseconds) = wait.components
            date = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        } else {
            let plain = ISO8601DateFormatter()
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            guard let parsed = plain.date(from: text) ?? fractional.date(from: text) else {
                problems.append("--start-at must be an RFC 3339 time (2026-11-23T11:00:00Z) or +DURATION (+30s), got '\(text)'")
                return nil
            }
            date = parsed
        }
        if date.timeIntervalSince(now) < -1 {
            problems.append("--start-at \(text) is \(Int(-date.timeIntervalSince(now))) s in the past")
            return nil
        }
        return date
    }

    /// `2026-11-23T11:00:00Z`.
    public static func rfc3339(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// Safe as a directory and file name on every generator: 1-64 of [A-Za-z0-9._-], not starting
    /// with '.' or '-'.
    static func isValidRunID(_ text: String) -> Bool {
        guard (1...64).contains(text.count), let first = text.first, first != ".", first != "-" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
    }

    /// `XMPPLOAD_SERVERS=a:5222,b:5222` (comma or space separated; `,weight=W` attaches to the
    /// endpoint before it) from the --server-env file, else the environment.
    static func serverList(environment: [String: String], file: String?) -> [String]? {
        var value = environment["XMPPLOAD_SERVERS"]
        if let file, let text = try? String(contentsOfFile: file, encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("XMPPLOAD_SERVERS=") {
                value = String(line.dropFirst("XMPPLOAD_SERVERS=".count))
            }
        }
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        var items: [String] = []
        for piece in value.split(whereSeparator: { $0 == "," || $0 == " " }) {
            if piece.hasPrefix("weight="), !items.isEmpty { items[items.count - 1] += ",\(piece)" } else { items.append(String(piece)) }
        }
        return items
    }

    /// One line per profile whose `transport:` has no endpoint among `endpoints`; with none (DNS SRV
    /// will name them, and SRV names TCP endpoints only), as if the run had one TCP endpoint.
    static func transportProblems(definition: RunDefinition, endpoints: [WeightedEndpoint]) -> [String] {
        do {
            try ProfileEndpoints.check(definition, endpoints: endpoints.isEmpty ? [WeightedEndpoint(host: "dns-srv", port: 5222)] : endpoints)
            return []
        } catch {
            return error.lines
        }
    }

    /// Parses `--threshold` texts; each problem becomes `--threshold 'TEXT': column N: message (hint)`.
    public static func parseThresholds(_ texts: [String], problems: inout [String]) -> [Threshold] {
        var parsed: [Threshold] = []
        for text in texts {
            do {
                parsed.append(try Threshold.parse(text))
            } catch {
                problems += error.problems.map { "--threshold '\(text)': \($0)" }
            }
        }
        return parsed
    }

    /// One line per `--threshold` on a latency metric `definition` cannot record (a typo such as
    /// `logn.p99`), with a did-you-mean.
    public static func thresholdMetricProblems(_ thresholds: [Threshold], definition: RunDefinition) -> [String] {
        let catalog = MetricCatalog(definition)
        return thresholds.compactMap { threshold in
            catalog.problem(with: threshold).map { "--threshold '\(threshold.text)': \($0.message) (\($0.hint))" }
        }
    }
}
