import Foundation
import LoadResults
import Testing

@testable import LoadEngine

/// The text exposition parser and the scraper's counter arithmetic, on bodies as node_exporter and
/// Prosody write them, and on broken ones.
@Suite struct ExpositionParserTests {
    /// node_exporter 1.5's text format 0.0.4 (abridged from a real scrape): untyped /proc counters, a
    /// gauge, a counter with labels.
    static let nodeExporter = """
        # HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
        # TYPE node_cpu_seconds_total counter
        node_cpu_seconds_total{cpu="0",mode="idle"} 1505.44
        node_cpu_seconds_total{cpu="0",mode="user"} 884.33
        node_cpu_seconds_total{cpu="1",mode="idle"} 1490.5
        node_cpu_seconds_total{cpu="1",mode="user"} 901.1
        # HELP node_load1 1m load average.
        # TYPE node_load1 gauge
        node_load1 9.89
        # HELP node_netstat_TcpExt_ListenOverflows Statistic TcpExtListenOverflows.
        # TYPE node_netstat_TcpExt_ListenOverflows untyped
        node_netstat_TcpExt_ListenOverflows 12
        # TYPE node_netstat_Tcp_CurrEstab untyped
        node_netstat_Tcp_CurrEstab 2001
        go_memstats_alloc_bytes 1.234e+06

        """

    /// Prosody 0.12's OpenMetrics (abridged from a real scrape): `_total`/`_created` counters, a
    /// histogram, `# UNIT`, `# EOF`.
    static let prosody = """
        # HELP prosody_mod_c2s__connections Established c2s connections
        # UNIT prosody_mod_c2s__connections 
        # TYPE prosody_mod_c2s__connections gauge
        prosody_mod_c2s__connections{host="load.test",type="c2s"} 2000
        # TYPE prosody_mod_bosh__new_sid counter
        prosody_mod_bosh__new_sid_created 1795848552.57441
        prosody_mod_bosh__new_sid_total 7
        # TYPE prosody_stats_processing_seconds histogram
        prosody_stats_processing_seconds_bucket{le="0.001"} 1
        prosody_stats_processing_seconds_bucket{le="+Inf"} 1
        prosody_stats_processing_seconds_created 1795848552.444993
        prosody_stats_processing_seconds_sum 2.1457672119140625e-06
        prosody_stats_processing_seconds_count 1
        # EOF
        ignored after EOF {{{

        """

    static func parse(_ text: String, keep: String?, limits: ScrapeLimits = .standard) throws -> ExpositionParser.Result {
        try ExpositionParser.parse(Array(text.utf8), selectors: keep.map { try! SeriesSelector.parseList($0) }, limits: limits)
    }

    @Test func nodeExporterSeriesAreTypedAndSelected() throws {
        let result = try Self.parse(Self.nodeExporter, keep: nil)
        #expect(result.seen == 8)
        let byKey = Dictionary(uniqueKeysWithValues: result.samples.map { ($0.key, $0) })
        #expect(byKey["node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}"]?.isCounter == true)
        #expect(byKey["node_load1"]?.isCounter == false)
        #expect(byKey["node_load1"]?.value == 9.89)
        // Untyped, but node_exporter's /proc/net/netstat counters only go up; CurrEstab is a gauge.
        #expect(byKey["node_netstat_TcpExt_ListenOverflows"]?.isCounter == true)
        #expect(byKey["node_netstat_Tcp_CurrEstab"]?.isCounter == false)
        #expect(byKey["go_memstats_alloc_bytes"]?.value == 1_234_000)
        let selected = try Self.parse(Self.nodeExporter, keep: "node_cpu_seconds_total{mode=\"idle\"},node_netstat_TcpExt_ListenOverflows")
        #expect(
            selected.samples.map(\.key).sorted() == [
                "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}", "node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"}",
                "node_netstat_TcpExt_ListenOverflows",
            ])
    }

    @Test func openMetricsCountersHistogramsAndEOF() throws {
        let result = try Self.parse(Self.prosody, keep: nil)
        let byKey = Dictionary(uniqueKeysWithValues: result.samples.map { ($0.key, $0) })
        #expect(byKey["prosody_mod_c2s__connections{host=\"load.test\",type=\"c2s\"}"]?.value == 2000)
        #expect(byKey["prosody_mod_bosh__new_sid_total"]?.isCounter == true)
        #expect(byKey["prosody_mod_bosh__new_sid_total"]?.family == "prosody_mod_bosh__new_sid")
        #expect(byKey["prosody_mod_bosh__new_sid_created"] == nil)  // a timestamp, not a series to keep
        #expect(byKey["prosody_stats_processing_seconds_count"]?.isCounter == true)
        #expect(byKey["prosody_stats_processing_seconds_bucket{le=\"+Inf\"}"]?.isCounter == true)
        #expect(byKey["prosody_stats_processing_seconds_created"] == nil)
        #expect(result.seen == 8)  // the line after # EOF is not read
        // A family name selects the histogram's series.
        let family = try Self.parse(Self.prosody, keep: "prosody_stats_processing_seconds")
        #expect(family.samples.count == 4)
    }

    struct Broken: Sendable, CustomStringConvertible {
        var name: String
        var body: String
        var line: Int
        var problem: String
        var description: String { name }
    }

    static let broken: [Broken] = [
        Broken(name: "HTML", body: "<html><body>Not Found</body></html>\n", line: 1, problem: "not a metric name or comment"),
        Broken(name: "binary", body: "\u{01}\u{02}\u{03}\n", line: 1, problem: "not a metric name or comment"),
        Broken(name: "no value", body: "a 1\nb\n", line: 2, problem: "no value after the series"),
        Broken(name: "bad number", body: "a one\n", line: 1, problem: "\"one\" is not a number"),
        Broken(name: "unquoted label", body: "a{x=1} 2\n", line: 1, problem: "label x's value is not quoted"),
        Broken(name: "open label value", body: "a{x=\"1} 2\n", line: 1, problem: "label x's value has no closing quote"),
        Broken(name: "open braces", body: "a{x=\"1\" 2\n", line: 1, problem: "expected , or } in the labels"),
    ]

    @Test(arguments: broken) func garbageFailsTheWholeScrape(_ row: Broken) {
        #expect(throws: ExpositionParser.Failure.malformed(line: row.line, problem: row.problem)) {
            try Self.parse(row.body, keep: nil)
        }
    }

    @Test func limitsRefuseHugeBodiesOfSeriesAndCapWhatIsKept() throws {
        var limits = ScrapeLimits()
        limits.maxSamples = 1000
        let many = (0..<1001).map { "s\($0) 1" }.joined(separator: "\n")
        #expect(throws: ExpositionParser.Failure.tooManySamples(limit: 1000)) { try Self.parse(many, keep: nil, limits: limits) }
        limits.maxLineBytes = 100
        #expect(throws: ExpositionParser.Failure.malformed(line: 2, problem: "a line longer than 100 bytes")) {
            try Self.parse("a 1\nb{x=\"\(String(repeating: "y", count: 200))\"} 1\n", keep: nil, limits: limits)
        }
        limits.maxLabelsPerSeries = 3
        #expect(throws: ExpositionParser.Failure.malformed(line: 1, problem: "a series with more than 3 labels")) {
            try Self.parse("a{a=\"1\",b=\"1\",c=\"1\",d=\"1\"} 1\n", keep: nil, limits: limits)
        }
        // Label cardinality: at most 5 series per family (a), 8 in all (b); the rest are counted as dropped.
        limits = ScrapeLimits()
        limits.maxSeriesPerFamily = 5
        limits.maxKeptSeries = 8
        let wide = ((0..<20).map { "a{id=\"\($0)\"} 1" } + (0..<20).map { "b{id=\"\($0)\"} 1" }).joined(separator: "\n")
        let capped = try Self.parse(wide, keep: nil, limits: limits)
        #expect(capped.samples.count == 8)
        #expect(capped.samples.filter { $0.family == "a" }.count == 5)
        #expect(capped.dropped == 32)
        // Series kept before keep their slots, even when new ones come first.
        let known: Set<String> = ["b{id=\"19\"}"]
        let sticky = try ExpositionParser.parse(Array(wide.utf8), selectors: nil, limits: limits, known: known)
        #expect(sticky.samples.contains { $0.series == "b{id=\"19\"}" })
        #expect(sticky.samples.count == 8)
    }

    @Test func nonFiniteValuesAndEscapesAndTimestamps() throws {
        let result = try Self.parse("a NaN\nb +Inf\nc{x=\"q\\\"\\\\\\n\"} 3 1700000000000\nd 4 # {trace_id=\"x\"} 1\n", keep: nil)
        #expect(result.samples.map(\.key) == ["c{x=\"q\\\"\\\\\\n\"}", "d"])
        #expect(result.samples.map(\.value) == [3, 4])
    }

    @Test func theScraperTurnsCountersIntoIncreasesAndSums() throws {
        let target = MonitorSource.PrometheusTarget(
            host: "127.0.0.1", port: 1, path: "/metrics",
            series: .only(try SeriesSelector.parseList("sum by (mode) (node_cpu_seconds_total),node_load1,node_netstat_TcpExt_ListenOverflows")))
        var scraper = PrometheusScraper(label: "node", target: target)
        func body(idle0: Double, idle1: Double, user: Double, overflows: Double, load: Double) -> [UInt8] {
            Array(
                """
                # TYPE node_cpu_seconds_total counter
                node_cpu_seconds_total{cpu="0",mode="idle"} \(idle0)
                node_cpu_seconds_total{cpu="1",mode="idle"} \(idle1)
                node_cpu_seconds_total{cpu="0",mode="user"} \(user)
                node_load1 \(load)
                node_netstat_TcpExt_ListenOverflows \(overflows)

                """.utf8)
        }
        // The first scrape has gauges only: no increase without an earlier value.
        let first = try #require(
            scraper.absorb(body: body(idle0: 100, idle1: 200, user: 50, overflows: 10, load: 1), at: 1_000_000_000, scrapeMilliseconds: 2)
                .series)
        #expect(first.seconds == nil && first.increases.isEmpty)
        #expect(first.gauges == ["node_load1": 1])
        let second = try #require(
            scraper.absorb(body: body(idle0: 104, idle1: 203, user: 52, overflows: 22, load: 3), at: 6_000_000_000, scrapeMilliseconds: 2)
                .series)
        #expect(second.seconds == 5)
        #expect(second.increases["sum by (mode) (node_cpu_seconds_total){mode=\"idle\"}"] == 7)
        #expect(second.increases["sum by (mode) (node_cpu_seconds_total){mode=\"user\"}"] == 2)
        #expect(second.increases["node_netstat_TcpExt_ListenOverflows"] == 12)
        #expect(second.rate("node_netstat_TcpExt_ListenOverflows") == 2.4)
        // A garbage scrape is a gap and leaves the counters alone; the next increase spans both.
        let broken = scraper.absorb(body: Array("<html>".utf8), at: 11_000_000_000, scrapeMilliseconds: 2)
        #expect(broken.gap?.reason == .malformed)
        // A counter that went down was reset (the exporter restarted): it counts from zero.
        let third = try #require(
            scraper.absorb(body: body(idle0: 110, idle1: 205, user: 53, overflows: 3, load: 2), at: 16_000_000_000, scrapeMilliseconds: 2)
                .series)
        #expect(third.seconds == 10)
        #expect(third.increases["node_netstat_TcpExt_ListenOverflows"] == 3)
        #expect(third.increases["sum by (mode) (node_cpu_seconds_total){mode=\"idle\"}"] == 8)
    }
}
