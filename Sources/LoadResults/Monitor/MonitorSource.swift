import Foundation

/// One `--monitor` value: what to watch on the server's side, and the name it goes by.
///
/// Forms (docs/MONITORING.md):
/// - `[LABEL=]process:PID` — one process by its id; when it exits, its intervals are gaps;
/// - `[LABEL=]process:NAME` — every process whose `comm` or executable's base name is `NAME`
///   (`comm` holds at most 15 characters, so a longer name matches on its first 15), summed, and
///   followed to a new process of that name after a restart (marked as an event);
/// - `[LABEL=]prometheus:http://HOST[:PORT][/PATH][?QUERY]` — a Prometheus or OpenMetrics text
///   endpoint; `keep=SELECTORS` in the query (not sent to the server) chooses the series
///   (`SeriesSelector`), `keep=all` keeps every series up to the scrape's limits, and without it a
///   built-in list of host and server series is kept (`SeriesChoice.defaults`). The path defaults to
///   `/metrics`.
///
/// `LABEL` (`[A-Za-z0-9_.-]`, at most 32 characters) names the source in results files, the console
/// and the attribution; without one it is the process name, `pid-N`, or the endpoint's `host:port`.
/// Labels are unique within a run.
public struct MonitorSource: Sendable, Equatable, Codable {
    /// A process by id or by name.
    public enum ProcessTarget: Sendable, Equatable, Codable {
        case pid(Int32)
        case name(String)
    }

    /// Which series of a scrape are kept.
    public enum SeriesChoice: Sendable, Equatable, Codable {
        /// `SeriesSelector.defaults`: host CPU, load, memory, TCP listen queue, process CPU and memory.
        case defaults
        /// `keep=all`: every series, up to the scrape's limits.
        case all
        /// `keep=…`: these selectors.
        case only([SeriesSelector])

        /// The selectors to apply; nil: every series.
        public var selectors: [SeriesSelector]? {
            switch self {
            case .defaults: return SeriesSelector.defaults
            case .all: return nil
            case .only(let selectors): return selectors
            }
        }
    }

    /// An HTTP endpoint with a text exposition.
    public struct PrometheusTarget: Sendable, Equatable, Codable {
        /// A host name, an IPv4 address or an IPv6 address (without brackets).
        public var host: String
        public var port: Int
        /// The request target: path and the query without `keep=` (e.g. `/metrics`).
        public var path: String
        public var series: SeriesChoice

        public init(host: String, port: Int, path: String, series: SeriesChoice) {
            self.host = host
            self.port = port
            self.path = path
            self.series = series
        }

        /// `host:port` as written in a URL (`[::1]:9100`).
        public var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    }

    /// What the source watches.
    public enum Target: Sendable, Equatable, Codable {
        case process(ProcessTarget)
        case prometheus(PrometheusTarget)
    }

    /// The source's name in results files and text.
    public var label: String
    public var target: Target
    /// The value as given on the command line.
    public var spec: String

    public init(label: String, target: Target, spec: String) {
        self.label = label
        self.target = target
        self.spec = spec
    }

    /// `process` or `prometheus`.
    public var kind: String {
        switch target {
        case .process: return "process"
        case .prometheus: return "prometheus"
        }
    }

    /// Most monitors a run takes.
    public static let maxSources = 16

    /// Parses every value; all problems at once (duplicate labels and too many sources included).
    public static func parseAll(_ specs: [String]) -> (sources: [MonitorSource], problems: [MonitorSpecError]) {
        var sources: [MonitorSource] = []
        var problems: [MonitorSpecError] = []
        for spec in specs {
            do {
                let source = try parse(spec)
                if let earlier = sources.first(where: { $0.label == source.label }) {
                    problems.append(
                        MonitorSpecError(
                            spec: spec, problem: "the label \"\(source.label)\" is already used by \(earlier.spec)",
                            hint: "name one of them: LABEL=\(spec)"))
                } else {
                    sources.append(source)
                }
            } catch {
                problems.append(error)
            }
        }
        if specs.count > maxSources {
            problems.append(
                MonitorSpecError(
                    spec: specs[maxSources], problem: "at most \(maxSources) monitors per run (\(specs.count) given)"))
        }
        return (sources, problems)
    }

    /// Parses one `--monitor` value.
    public static func parse(_ spec: String) throws(MonitorSpecError) -> MonitorSource {
        func fail(_ problem: String, _ hint: String = "") -> MonitorSpecError {
            MonitorSpecError(spec: spec, problem: problem, hint: hint)
        }
        let forms = "process:PID, process:NAME or prometheus:http://HOST:PORT/metrics"
        guard let colon = spec.firstIndex(of: ":") else {
            throw fail("not a monitor", "give \(forms)")
        }
        var head = spec[..<colon]
        var label: String?
        if let equals = head.firstIndex(of: "=") {
            let given = String(head[..<equals])
            guard isValidLabel(given) else {
                throw fail(
                    given.isEmpty ? "the label before \"=\" is empty" : "the label \"\(given)\" is not a name",
                    "letters, digits, _ . - (at most 32)")
            }
            label = given
            head = head[head.index(after: equals)...]
        }
        let body = String(spec[spec.index(after: colon)...])
        switch head.lowercased() {
        case "process":
            let target = try processTarget(body, fail: fail)
            let derived: String
            switch target {
            case .pid(let pid): derived = "pid-\(pid)"
            case .name(let name): derived = String(name.prefix(32)).map { isLabelCharacter($0) ? $0 : "_" }.reduce(into: "") { $0.append($1) }
            }
            return MonitorSource(label: label ?? derived, target: .process(target), spec: spec)
        case "prometheus", "openmetrics":
            let target = try prometheusTarget(body, fail: fail)
            return MonitorSource(label: label ?? target.authority, target: .prometheus(target), spec: spec)
        default:
            throw fail("unknown monitor kind \"\(head)\"", "give \(forms)")
        }
    }

    private static func processTarget(
        _ body: String, fail: (String, String) -> MonitorSpecError
    ) throws(MonitorSpecError) -> ProcessTarget {
        guard !body.isEmpty else { throw fail("no process given", "process:PID or process:NAME, e.g. process:prosody") }
        if body.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let pid = Int32(body), pid > 0 else { throw fail("\(body) is not a process id", "a PID from 1 to \(Int32.max)") }
            return .pid(pid)
        }
        guard !body.contains("/") else {
            throw fail("a process name has no \"/\"", "give the executable's base name, e.g. process:prosody")
        }
        guard body.utf8.count <= 255, !body.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else {
            throw fail("\"\(body)\" is not a process name", "the name shown by `ps -o comm`")
        }
        return .name(body)
    }

    private static func prometheusTarget(
        _ body: String, fail: (String, String) -> MonitorSpecError
    ) throws(MonitorSpecError) -> PrometheusTarget {
        let lower = body.lowercased()
        if lower.hasPrefix("https://") {
            throw fail("https is not supported", "scrape over http, e.g. through an SSH tunnel to the host's loopback")
        }
        guard lower.hasPrefix("http://") else {
            throw fail("expected an http:// URL after prometheus:", "prometheus:http://127.0.0.1:9100/metrics")
        }
        var rest = Substring(body.dropFirst("http://".count))
        if rest.contains("#") { throw fail("a URL fragment (#…) has no meaning here", "") }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        guard !authority.contains("@") else { throw fail("credentials in the URL are not supported", "") }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw fail("an IPv6 address's \"]\" is missing", "http://[::1]:9100/metrics") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected \"\(after)\" after the IPv6 address", "") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw fail("\"\(host)\" is not an IPv6 address", "")
            }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty else { throw fail("the URL has no host", "prometheus:http://127.0.0.1:9100/metrics") }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw fail("\"\(host)\" is not a host name or address", "")
            }
        }
        var port = 80
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw fail("\"\(portText)\" is not a port", "a number from 1 to 65535")
            }
            port = value
        }
        var path = ""
        var query: Substring = ""
        if let question = rest.firstIndex(of: "?") {
            path = String(rest[..<question])
            query = rest[rest.index(after: question)...]
        } else {
            path = String(rest)
        }
        if path.isEmpty { path = "/metrics" }
        guard path.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0.asciiValue! > 0x20 && $0 != "\"" }) else {
            throw fail("the URL's path has a space or a character that needs %-encoding", "")
        }
        var series = SeriesChoice.defaults
        var passed: [Substring] = []
        let parameters: [String]
        do {
            parameters = try SeriesSelector.splitTopLevel(String(query), separator: "&")
        } catch {
            throw fail("keep=: \(error.problem)", "")
        }
        var sawKeep = false
        for parameter in parameters where !parameter.isEmpty {
            guard parameter.hasPrefix("keep=") else {
                guard parameter.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" }) else {
                    throw fail("the query parameter \"\(parameter)\" needs %-encoding", "")
                }
                passed.append(Substring(parameter))
                continue
            }
            guard !sawKeep else { throw fail("keep= is given twice", "list every selector in one keep=, separated by commas") }
            sawKeep = true
            var list = String(parameter.dropFirst("keep=".count))
            if list.contains("%") {
                guard let decoded = list.removingPercentEncoding else { throw fail("keep= has a broken %-escape", "") }
                list = decoded
            }
            if list.trimmingCharacters(in: .whitespaces) == "all" {
                series = .all
                continue
            }
            do {
                series = .only(try SeriesSelector.parseList(list))
            } catch {
                throw fail(
                    "keep=: \(error.problem) in \"\(error.entry)\"",
                    "e.g. keep=node_cpu_seconds_total{mode=\"idle\"},node_netstat_TcpExt_ListenOverflows")
            }
        }
        let target = path + (passed.isEmpty ? "" : "?" + passed.joined(separator: "&"))
        return PrometheusTarget(host: String(host), port: port, path: target, series: series)
    }

    static func isValidLabel(_ label: String) -> Bool {
        !label.isEmpty && label.count <= 32 && label.allSatisfy(isLabelCharacter)
    }

    static func isLabelCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "." || character == "-")
    }
}
