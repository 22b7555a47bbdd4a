import Foundation
import Testing

@testable import LoadResults

/// `--monitor` values: every form parses into the source it names, every mistake is a usage error
/// that says what is wrong.
@Suite struct MonitorSourceTests {
    struct Good: Sendable, CustomStringConvertible {
        var spec: String
        var label: String
        var target: MonitorSource.Target
        var description: String { spec }
    }

    static let idle = SeriesSelector(name: "node_cpu_seconds_total", matchers: [.init(label: "mode", comparison: .equal, value: "idle")])
    static let overflows = SeriesSelector(name: "node_netstat_TcpExt_ListenOverflows")

    static let good: [Good] = [
        Good(spec: "process:1234", label: "pid-1234", target: .process(.pid(1234))),
        Good(spec: "process:prosody", label: "prosody", target: .process(.name("prosody"))),
        Good(spec: "xmpp=process:beam.smp", label: "xmpp", target: .process(.name("beam.smp"))),
        Good(
            spec: "prometheus:http://127.0.0.1:9100/metrics", label: "127.0.0.1:9100",
            target: .prometheus(.init(host: "127.0.0.1", port: 9100, path: "/metrics", series: .defaults))),
        Good(
            spec: "node=prometheus:http://localhost:9100", label: "node",
            target: .prometheus(.init(host: "localhost", port: 9100, path: "/metrics", series: .defaults))),
        Good(
            spec: "prometheus:http://[::1]:5280/metrics?keep=all", label: "[::1]:5280",
            target: .prometheus(.init(host: "::1", port: 5280, path: "/metrics", series: .all))),
        Good(
            spec: "prometheus:http://127.0.0.1:9100/metrics?keep=node_cpu_seconds_total{mode=\"idle\"},node_netstat_TcpExt_ListenOverflows",
            label: "127.0.0.1:9100",
            target: .prometheus(.init(host: "127.0.0.1", port: 9100, path: "/metrics", series: .only([idle, overflows])))),
        // Other query parameters go to the server; keep= does not, wherever it is.
        Good(
            spec: "prometheus:http://127.0.0.1:9100/metrics?collect[]=cpu&keep=node_load1&x=1", label: "127.0.0.1:9100",
            target: .prometheus(
                .init(host: "127.0.0.1", port: 9100, path: "/metrics?collect[]=cpu&x=1", series: .only([.init(name: "node_load1")])))),
        // Percent-encoded selectors (a shell that mangles braces) decode.
        Good(
            spec: "prometheus:http://h:1/m?keep=node_cpu_seconds_total%7Bmode%3D%22idle%22%7D", label: "h:1",
            target: .prometheus(.init(host: "h", port: 1, path: "/m", series: .only([idle])))),
        Good(
            spec: "prometheus:http://h:80/?keep=sum by (mode) (node_cpu_seconds_total),node_*", label: "h:80",
            target: .prometheus(
                .init(
                    host: "h", port: 80, path: "/",
                    series: .only([
                        .init(name: "node_cpu_seconds_total", aggregation: .sumBy(["mode"])), .init(name: "node_", isPrefix: true),
                    ])))),
    ]

    @Test(arguments: good) func parses(_ row: Good) throws {
        let source = try MonitorSource.parse(row.spec)
        #expect(source.label == row.label)
        #expect(source.target == row.target)
        #expect(source.spec == row.spec)
    }

    struct Bad: Sendable, CustomStringConvertible {
        var spec: String
        var says: String
        var description: String { spec }
    }

    static let bad: [Bad] = [
        Bad(spec: "prosody", says: "not a monitor"),
        Bad(spec: "proc:1", says: "unknown monitor kind \"proc\""),
        Bad(spec: "process:", says: "no process given"),
        Bad(spec: "process:0", says: "is not a process id"),
        Bad(spec: "process:99999999999", says: "is not a process id"),
        Bad(spec: "process:/usr/bin/prosody", says: "has no \"/\""),
        Bad(spec: "bad label=process:1", says: "is not a name"),
        Bad(spec: "=process:1", says: "label before \"=\" is empty"),
        Bad(spec: "prometheus:https://h:1/metrics", says: "https is not supported"),
        Bad(spec: "prometheus:h:9100/metrics", says: "expected an http:// URL"),
        Bad(spec: "prometheus:http://:9100/metrics", says: "has no host"),
        Bad(spec: "prometheus:http://h:0/metrics", says: "is not a port"),
        Bad(spec: "prometheus:http://h:99999/metrics", says: "is not a port"),
        Bad(spec: "prometheus:http://user:pw@h:1/metrics", says: "credentials"),
        Bad(spec: "prometheus:http://[::1/metrics", says: "\"]\" is missing"),
        Bad(spec: "prometheus:http://h:1/metrics#x", says: "fragment"),
        Bad(spec: "prometheus:http://h:1/met rics", says: "%-encoding"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=", says: "empty entry"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a,,b", says: "empty entry"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a{mode=idle}", says: "must be in double quotes"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a{mode=\"idle}", says: "closing quote"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a{mode=~\"i.*\"}", says: "regular expressions"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a{mode\"x\"}", says: "expected = or !="),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a{", says: "not closed"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a}", says: "without its opening"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=9abc", says: "cannot start with \"9\""),
        Bad(spec: "prometheus:http://h:1/metrics?keep=sum(a", says: "not closed"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=sum by (a,a) (b)", says: "listed twice"),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a b", says: "unexpected \"b\""),
        Bad(spec: "prometheus:http://h:1/metrics?keep=a&keep=b", says: "keep= is given twice"),
    ]

    @Test(arguments: bad) func refuses(_ row: Bad) {
        do {
            let source = try MonitorSource.parse(row.spec)
            Issue.record("parsed as \(source)")
        } catch {
            #expect(error.description.contains(row.says), "\(error.description)")
            #expect(error.description.hasPrefix("--monitor \(row.spec):"))
        }
    }

    @Test func everyProblemIsReportedAtOnceWithDuplicateLabels() {
        let (sources, problems) = MonitorSource.parseAll([
            "process:prosody", "process:prosody", "prometheus:http://h:1/metrics", "prometheus:ftp://x", "other=prometheus:http://h:1/metrics",
        ])
        #expect(sources.map(\.label) == ["prosody", "h:1", "other"])
        #expect(problems.count == 2)
        #expect(problems[0].problem.contains("already used by process:prosody"))
        #expect(problems[0].hint.contains("LABEL="))
        #expect(problems[1].problem.contains("http://"))
    }

    @Test func tooManyMonitorsIsAProblem() {
        let specs = (1...(MonitorSource.maxSources + 1)).map { "process:\($0)" }
        let (_, problems) = MonitorSource.parseAll(specs)
        #expect(problems.map(\.problem) == ["at most 16 monitors per run (17 given)"])
    }

    @Test func theDefaultSelectorsParse() throws {
        #expect(SeriesSelector.defaults.count == SeriesSelector.defaultList.split(separator: ",").count - 0)
        #expect(SeriesSelector.defaults.first?.aggregation == .sumBy(["mode"]))
        // Written back, every selector reads the same.
        for selector in SeriesSelector.defaults { #expect(try SeriesSelector.parse(selector.text) == selector) }
    }

    @Test func selectorsMatchByNameFamilyPrefixAndLabels() throws {
        let idle = try SeriesSelector.parse("node_cpu_seconds_total{mode=\"idle\",cpu!=\"1\"}")
        #expect(idle.matches(sampleName: "node_cpu_seconds_total", family: "node_cpu_seconds_total", labels: [("cpu", "0"), ("mode", "idle")]))
        #expect(!idle.matches(sampleName: "node_cpu_seconds_total", family: "node_cpu_seconds_total", labels: [("cpu", "1"), ("mode", "idle")]))
        #expect(!idle.matches(sampleName: "node_cpu_seconds_total", family: "node_cpu_seconds_total", labels: [("cpu", "0"), ("mode", "user")]))
        // A histogram's family name selects its _sum and _count.
        let family = try SeriesSelector.parse("prosody_stats_processing_seconds")
        #expect(family.matches(sampleName: "prosody_stats_processing_seconds_sum", family: "prosody_stats_processing_seconds", labels: []))
        // An absent label reads as "".
        let none = try SeriesSelector.parse("x{host=\"\"}")
        #expect(none.matches(sampleName: "x", family: "x", labels: []))
        let prefix = try SeriesSelector.parse("node_netstat_TcpExt_Listen*")
        #expect(prefix.matches(sampleName: "node_netstat_TcpExt_ListenDrops", family: "node_netstat_TcpExt_ListenDrops", labels: []))
        #expect(!prefix.matches(sampleName: "node_netstat_Tcp_CurrEstab", family: "node_netstat_Tcp_CurrEstab", labels: []))
    }

    @Test func keysAreCanonicalAndSumsNameTheirSelector() throws {
        #expect(SeriesSelector.seriesKey(name: "a", labels: [("z", "1"), ("b", "q\"\\\n")]) == "a{b=\"q\\\"\\\\\\n\",z=\"1\"}")
        #expect(SeriesSelector.seriesKey(name: "a", labels: []) == "a")
        let sum = try SeriesSelector.parse("sum(node_cpu_seconds_total{mode=\"idle\"})")
        #expect(
            sum.key(sampleName: "node_cpu_seconds_total", labels: [("cpu", "0"), ("mode", "idle")]) == "sum(node_cpu_seconds_total{mode=\"idle\"})")
        let byMode = try SeriesSelector.parse("sum by (mode) (node_cpu_seconds_total)")
        #expect(
            byMode.key(sampleName: "node_cpu_seconds_total", labels: [("cpu", "3"), ("mode", "user")])
                == "sum by (mode) (node_cpu_seconds_total){mode=\"user\"}")
    }
}
