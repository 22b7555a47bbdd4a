import Foundation
import Testing

@testable import LoadResults

/// Who limited a run, as a table of plain runs: ten 5 s intervals with a login p99 per interval, the
/// generator's health, and what the monitors saw.
@Suite struct LimitAttributionTests {
    static let healthy = GeneratorHealth(
        cpuPercent: 40, cpuSeconds: 2, rssBytes: 1, openFileDescriptors: 10, loopLagP99Milliseconds: 3, loopLagMaxMilliseconds: 5, cores: 2)
    static let saturated = GeneratorHealth(
        cpuPercent: 195, cpuSeconds: 9.75, rssBytes: 1, openFileDescriptors: 10, loopLagP99Milliseconds: 230, loopLagMaxMilliseconds: 400,
        cores: 2)

    static func load(p99: [Double], generator: [GeneratorHealth], online: [Double]? = nil) -> [LoadPoint] {
        p99.indices.map { index in
            LoadPoint(
                start: Double(index) * 5, end: Double(index + 1) * 5, logins: 100, online: online?[index] ?? Double(index + 1) * 100,
                latencyP99Milliseconds: p99[index], latencyCount: 100, generator: generator[index])
        }
    }

    static func cpu(_ percents: [Double], cores: Int = 1, rss: [UInt64]? = nil) -> [MonitorReading?] {
        percents.indices.map { index in
            MonitorValuesTests.process(cpu: percents[index], rss: rss?[index] ?? 50_000_000, seconds: 5, cores: cores, threads: cores)
        }
    }

    /// A single-threaded process that ran `cpu` % of a core and waited for one `wait` % of the time.
    static func starved(_ cpu: [Double], wait: [Double]) -> [MonitorReading?] {
        cpu.indices.map { index in
            .process(
                ProcessSample(
                    name: "prosody", pids: [42], seconds: 5, cpuPercent: cpu[index], userPercent: cpu[index], systemPercent: 0,
                    usableCores: 1, busiestThreadPercent: cpu[index], runQueueWaitPercent: wait[index], rssBytes: 50_000_000, threads: 1,
                    openFDs: 20, voluntarySwitchesPerSecond: 0, involuntarySwitchesPerSecond: 0))
        }
    }

    /// Loop lag p99 of 103 ms at half the CPU: saturated by the lag rule, from a busy host.
    static let lagging = GeneratorHealth(
        cpuPercent: 100, cpuSeconds: 5, rssBytes: 1, openFileDescriptors: 10, loopLagP99Milliseconds: 103, loopLagMaxMilliseconds: 300,
        cores: 2)

    static let light = [30.0, 28, 35, 31, 29, 33, 30, 32, 29, 31]
    static let rising = [40.0, 60, 900, 2500, 5000, 8000, 10600, 9000, 7000, 6000]
    static let allHealthy = Array(repeating: healthy, count: 10)

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var p99: [Double]
        var generator: [GeneratorHealth]
        var sources: [LimitAttribution.Source]
        var online: [Double]? = nil
        var runP99 = 10_600.0
        var limitedBy: LimitAttribution.LimitedBy
        var evidence: String
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "saturated server", p99: rising, generator: allHealthy,
            sources: [.init(label: "prosody", readings: cpu([40, 70, 98, 99, 98, 97, 99, 98, 96, 95]))], limitedBy: .server,
            evidence: "login p99 10.6 s: server-bound — prosody at 98 % of 1 core from 10 s to 50 s"),
        Row(
            name: "saturated server with listen-queue overflows", p99: rising, generator: allHealthy,
            sources: [
                .init(label: "prosody", readings: cpu([40, 70, 98, 99, 98, 97, 99, 98, 96, 95])),
                .init(
                    label: "node_exporter",
                    readings: (0..<10).map { index in
                        MonitorValuesTests.series(increases: ["node_netstat_TcpExt_ListenOverflows": index >= 2 ? 50 : 0], seconds: 5)
                    } + []),
            ], limitedBy: .server,
            evidence: "login p99 10.6 s: server-bound — prosody at 98 % of 1 core from 10 s to 50 s, 400 listen-queue overflows (node_exporter)"),
        Row(
            name: "a server starved of CPU on a shared host", p99: rising, generator: allHealthy,
            sources: [
                .init(label: "prosody", readings: starved([40, 60, 70, 72, 69, 70, 71, 70, 68, 70], wait: [1, 5, 28, 27, 29, 28, 27, 28, 30, 28]))
            ],
            limitedBy: .server,
            evidence: "login p99 10.6 s: server-bound — prosody at 70 % of 1 core (waiting for a CPU another 28 %) from 10 s to 50 s"),
        Row(
            name: "a generator lagging 103 ms does not explain 10 s logins beside a saturated server", p99: rising,
            generator: Array(repeating: healthy, count: 2) + Array(repeating: lagging, count: 8),
            sources: [.init(label: "prosody", readings: cpu([40, 70, 98, 99, 98, 97, 99, 98, 96, 95]))], limitedBy: .server,
            evidence:
                "login p99 10.6 s: server-bound — prosody at 98 % of 1 core from 10 s to 50 s; the generator saturated too (loop lag p99 up to 103 ms, CPU up to 100 % of 2 cores), too little to explain it"
        ),
        Row(
            name: "memory that grows with the sessions is not climbing", p99: rising, generator: allHealthy,
            sources: [
                .init(
                    label: "prosody",
                    readings: cpu(Array(repeating: 30, count: 10), rss: (1...10).map { UInt64($0) * 40 * 1_048_576 }))
            ], limitedBy: .unknown,
            evidence:
                "login p99 10.6 s: latency rose from 10 s to 50 s, but neither side saturated — prosody at most 30 % of 1 core; generator loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores"
        ),
        Row(
            name: "a server on two cores is not saturated at 100 % of one", p99: rising, generator: allHealthy,
            sources: [.init(label: "ejabberd", readings: cpu([40, 70, 98, 99, 98, 97, 99, 98, 96, 95], cores: 2))], limitedBy: .unknown,
            evidence:
                "login p99 10.6 s: latency rose from 10 s to 50 s, but neither side saturated — ejabberd at most 99 % of 2 cores; generator loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores"
        ),
        Row(
            name: "light run", p99: light, generator: allHealthy,
            sources: [.init(label: "prosody", readings: cpu([5, 8, 12, 15, 23, 20, 18, 17, 16, 15]))], runP99: 35, limitedBy: .none,
            evidence:
                "login p99 35 ms: no limit reached — prosody at most 23 % of 1 core; generator loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores"
        ),
        Row(
            name: "a busy server that kept latency down did not limit the run", p99: light, generator: allHealthy,
            sources: [.init(label: "prosody", readings: cpu(Array(repeating: 97, count: 10)))], runP99: 35, limitedBy: .none,
            evidence:
                "login p99 35 ms: no limit reached — prosody at most 97 % of 1 core; generator loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores"
        ),
        Row(
            name: "saturated generator", p99: rising, generator: Array(repeating: healthy, count: 2) + Array(repeating: saturated, count: 8),
            sources: [.init(label: "prosody", readings: cpu([10, 12, 15, 14, 13, 12, 14, 15, 12, 11]))], limitedBy: .generator,
            evidence:
                "login p99 10.6 s: generator-bound — the generator saturated in 8 of 8 slow intervals (loop lag p99 up to 230 ms, CPU up to 195 % of 2 cores)"
        ),
        Row(
            name: "both saturated: the generator's latencies measure itself", p99: rising,
            generator: Array(repeating: healthy, count: 2) + Array(repeating: saturated, count: 8),
            sources: [.init(label: "prosody", readings: cpu([40, 70, 98, 99, 98, 97, 99, 98, 96, 95]))], limitedBy: .generator,
            evidence:
                "login p99 10.6 s: generator-bound — the generator saturated in 8 of 8 slow intervals (loop lag p99 up to 230 ms, CPU up to 195 % of 2 cores); the server was at its limit too: prosody at 98 % of 1 core from 10 s to 50 s"
        ),
        Row(
            name: "no monitors", p99: rising, generator: allHealthy, sources: [], limitedBy: .unknown,
            evidence:
                "login p99 10.6 s: server side unseen (no --monitor); the generator was not saturated (loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores)"
        ),
        Row(
            name: "no monitors, saturated generator", p99: rising, generator: Array(repeating: saturated, count: 10), sources: [],
            limitedBy: .generator,
            evidence:
                "login p99 10.6 s: generator-bound — the generator saturated in 8 of 8 slow intervals (loop lag p99 up to 230 ms, CPU up to 195 % of 2 cores)"
        ),
        Row(
            name: "gaps over the window", p99: rising, generator: allHealthy,
            sources: [
                .init(
                    label: "prosody",
                    readings: cpu([40, 70]) + Array(repeating: MonitorReading.gap(MonitorGap(.exited, "pid 42 exited")), count: 8))
            ], limitedBy: .unknown,
            evidence:
                "login p99 10.6 s: server side unseen from 10 s to 50 s (gaps: exited); the generator was not saturated (loop lag p99 up to 3.0 ms, CPU up to 40 % of 2 cores)"
        ),
        Row(
            name: "memory climbing with sessions flat", p99: rising, generator: allHealthy,
            sources: [
                .init(
                    label: "prosody",
                    readings: cpu(
                        Array(repeating: 30, count: 10),
                        rss: [100, 100, 100, 150, 200, 250, 300, 350, 400, 480].map { $0 * 1_048_576 }))
            ], online: Array(repeating: 2000, count: 10), limitedBy: .server,
            evidence: "login p99 10.6 s: server-bound — prosody memory 100.0 MiB → 480.0 MiB with sessions online flat at 2000"),
    ]

    @Test(arguments: rows) func judges(_ row: Row) {
        let attribution = LimitAttribution.judge(
            metric: "login", runP99Milliseconds: row.runP99, load: Self.load(p99: row.p99, generator: row.generator, online: row.online),
            sources: row.sources)
        #expect(attribution.limitedBy == row.limitedBy)
        #expect(attribution.evidence == row.evidence)
    }

    @Test func theWindowIsTheSlowIntervalsAndARunSlowThroughoutIsSlowThroughout() {
        let attribution = LimitAttribution.judge(
            metric: "login", runP99Milliseconds: 10_600, load: Self.load(p99: Self.rising, generator: Self.allHealthy),
            sources: [.init(label: "prosody", readings: Self.cpu(Array(repeating: 99, count: 10)))])
        #expect(attribution.windowStart == 10 && attribution.windowEnd == 50)
        let slow = LimitAttribution.judge(
            metric: "login", runP99Milliseconds: 9000, load: Self.load(p99: Array(repeating: 9000, count: 10), generator: Self.allHealthy),
            sources: [.init(label: "prosody", readings: Self.cpu(Array(repeating: 99, count: 10)))])
        #expect(slow.limitedBy == .server)
        #expect(slow.windowStart == 0 && slow.windowEnd == 50)
    }

    @Test func theValueIsSummaryJSONsLimitedBy() throws {
        let attribution = LimitAttribution(limitedBy: .server, evidence: "x", windowStart: 6, windowEnd: 31)
        let json = String(decoding: try JSONEncoder().encode(attribution), as: UTF8.self)
        #expect(json.contains("\"limited_by\":\"server\""))
        #expect(LimitAttribution.formatLatency(237) == "237 ms" && LimitAttribution.formatLatency(10_600) == "10.6 s")
    }
}
