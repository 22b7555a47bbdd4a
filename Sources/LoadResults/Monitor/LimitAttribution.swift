import Foundation

/// Who limited a run: the generator, the server, neither, or unknown (the server side unseen) — with
/// the evidence in one line: `login p99 10.6 s: server-bound — prosody at 98 % of 1 core from 6 s to
/// 31 s, 412 listen-queue overflows (node_exporter)`. summary.json's `limited_by`. Pure: plain values
/// in, a value out.
///
/// The rules (`Rules` holds the numbers):
/// 1. **Did latency rise?** An interval is *slow* when its p99 of the watched metric is at least
///    `max(slowFloor, riseFactor × baseline)`, where the baseline is the lowest interval p99 capped
///    at the floor (so a run slow from its first interval is slow throughout). The slow intervals
///    are the window the sides are judged in; with none, the whole run is.
/// 2. **The generator** saturated when `GeneratorHealth.saturated` (loop lag p99 > 50 ms or CPU
///    > 90 % of its cores) in at least `saturatedShare` of the window's intervals — the share
///    `capacity` uses. It limited the run when that *explains* the latency — its CPU was at its
///    limit, or its loop lag was a quarter of the interval's p99 or more — or when the server shows
///    nothing; a generator lagging 100 ms beside a server whose logins take 19 s did not.
/// 3. **The server** limited it when, in the window, a monitored process asked for ≥ `cpuLimit` of
///    the cores it can use (its threads, at most the CPUs it may run on; CPU it ran plus time it
///    waited for a CPU, so a server starved on a shared host counts) in at least `saturatedShare`
///    of the intervals, or the host's TCP listen queue overflowed (node_exporter's
///    `node_netstat_TcpExt_ListenOverflows`), or a process's memory climbed by `memoryGrowth` while
///    the sessions online held at their peak. Only when latency rose: a server near its limit that
///    kept latency down did not limit the run.
/// 4. **Unknown** when no source saw the server in at least half of the window's intervals (no
///    monitor, or gaps), or latency rose and neither side shows why; **none** otherwise.
public struct LimitAttribution: Sendable, Equatable, Codable {
    /// The side that limited the run.
    public enum LimitedBy: String, Sendable, Equatable, Codable, CaseIterable {
        case generator, server, none, unknown
    }

    /// One monitored source's readings, arranged like the load's intervals (`MonitorAlignment`).
    public struct Source: Sendable, Equatable {
        public var label: String
        public var readings: [MonitorReading?]

        public init(label: String, readings: [MonitorReading?]) {
            self.label = label
            self.readings = readings
        }
    }

    /// The thresholds of the rules above.
    public struct Rules: Sendable, Equatable {
        /// An interval p99 below this is never slow, in milliseconds.
        public var slowFloorMilliseconds = 250.0
        /// Slow means at least this many times the baseline.
        public var riseFactor = 2.0
        /// Share of the window's intervals a side must be saturated in.
        public var saturatedShare = 1.0 / 3
        /// A process at this fraction of its usable cores is saturated.
        public var cpuLimit = 0.9
        /// Memory growth over the window (a fraction) that counts as climbing.
        public var memoryGrowth = 0.25

        public init() {}
    }

    public var limitedBy: LimitedBy
    /// One line for people (see the type's documentation).
    public var evidence: String
    /// The slow intervals' span, in seconds since the run's start; nil when latency did not rise.
    public var windowStart: Double?
    public var windowEnd: Double?

    enum CodingKeys: String, CodingKey {
        case limitedBy = "limited_by"
        case evidence
        case windowStart = "window_start"
        case windowEnd = "window_end"
    }

    public init(limitedBy: LimitedBy, evidence: String, windowStart: Double? = nil, windowEnd: Double? = nil) {
        self.limitedBy = limitedBy
        self.evidence = evidence
        self.windowStart = windowStart
        self.windowEnd = windowEnd
    }

    /// Judges a run: `metric` and `runP99Milliseconds` name the latency the verdict reports (e.g.
    /// `login`, the whole run's p99); `load` is the run's intervals; `sources` the monitors' readings
    /// per interval, in the same order (empty: the run had no monitor).
    public static func judge(
        metric: String, runP99Milliseconds: Double, load: [LoadPoint], sources: [Source], rules: Rules = Rules()
    ) -> LimitAttribution {
        let headline = "\(metric) p99 \(formatLatency(runP99Milliseconds))"
        let measured = load.indices.filter { load[$0].latencyCount > 0 }
        let baseline = min(measured.map { load[$0].latencyP99Milliseconds }.min() ?? 0, rules.slowFloorMilliseconds)
        let slowLimit = max(rules.slowFloorMilliseconds, rules.riseFactor * baseline)
        let slow = measured.filter { load[$0].latencyP99Milliseconds >= slowLimit }
        let rose = !slow.isEmpty
        let window = rose ? slow : Array(load.indices)
        let span: (Double, Double)? = rose ? (load[slow.first!].start, load[slow.last!].end) : nil
        func needed(_ count: Int) -> Int { max(1, Int((rules.saturatedShare * Double(count)).rounded(.up))) }

        // The generator.
        let generatorSaturated = window.filter { load[$0].generator?.saturated == true }
        let healths = window.compactMap { load[$0].generator }
        let generatorText = describeGenerator(healths)
        let generatorLimited = !window.isEmpty && generatorSaturated.count >= needed(window.count)
        // Its saturation explains the latency when it could not use more CPU, or its loop lag is of the
        // latency's order (a quarter of it or more); a 100 ms lag does not explain 19 s logins.
        let generatorExplains =
            !rose
            || generatorSaturated.contains { index in
                guard let health = load[index].generator else { return false }
                return health.cpuPercent > GeneratorHealth.cpuLimitFraction * 100 * Double(max(health.cores, 1))
                    || health.loopLagP99Milliseconds >= 0.25 * load[index].latencyP99Milliseconds
            }

        // The server: what each source shows in the window.
        var findings: [String] = []
        var serverSaturated = false
        var peaks: [String] = []
        let seen = window.filter { index in sources.contains { source in source.reading(index).map { $0.gap == nil } ?? false } }
        for source in sources {
            let samples = window.compactMap { index in source.reading(index)?.process.map { (index, $0) } }
            if !samples.isEmpty {
                let hot = samples.filter { $0.1.demandPercentOfUsable >= rules.cpuLimit * 100 }
                let cores = samples.map(\.1.usableCores).max() ?? 1
                if rose && hot.count >= needed(window.count) {
                    serverSaturated = true
                    let mean = hot.map(\.1.cpuPercent).reduce(0, +) / Double(hot.count)
                    let waited = hot.map { $0.1.runQueueWaitPercent ?? 0 }.reduce(0, +) / Double(hot.count)
                    let waiting = waited >= 5 ? " (waiting for a CPU another \(percent(waited)))" : ""
                    findings.append(
                        "\(source.label) at \(percent(mean)) of \(coreText(cores))\(waiting) from \(seconds(load[hot.first!.0].start)) to \(seconds(load[hot.last!.0].end))"
                    )
                } else {
                    let top = samples.map(\.1.cpuPercent).max() ?? 0
                    peaks.append("\(source.label) at most \(percent(top)) of \(coreText(cores))")
                }
                // Memory climbing while the sessions online held at their peak (a ramp's growth is not).
                let peakOnline = samples.map { load[$0.0].online }.max() ?? 0
                let plateau = samples.filter { peakOnline > 0 && load[$0.0].online >= 0.95 * peakOnline }
                if rose, plateau.count >= 3, let first = plateau.first, let last = plateau.last,
                    Double(last.1.rssBytes) >= (1 + rules.memoryGrowth) * Double(max(first.1.rssBytes, 1))
                {
                    serverSaturated = true
                    findings.append(
                        "\(source.label) memory \(bytes(first.1.rssBytes)) → \(bytes(last.1.rssBytes)) with sessions online flat at \(count(peakOnline))"
                    )
                }
            }
            let scrapes = window.compactMap { source.reading($0)?.series }
            if !scrapes.isEmpty {
                let overflows = scrapes.map { total($0.increases, prefix: "node_netstat_TcpExt_ListenOverflows") }.reduce(0, +)
                let drops = scrapes.map { total($0.increases, prefix: "node_netstat_TcpExt_ListenDrops") }.reduce(0, +)
                if rose && overflows > 0 {
                    serverSaturated = true
                    findings.append("\(count(overflows)) listen-queue overflows (\(source.label))")
                } else if rose && drops > 0 {
                    serverSaturated = true
                    findings.append("\(count(drops)) listen drops (\(source.label))")
                }
            }
        }

        let windowText = span.map { " from \(seconds($0.0)) to \(seconds($0.1))" } ?? ""
        if generatorLimited && (generatorExplains || !serverSaturated) {
            var text =
                "\(headline): generator-bound — the generator saturated in \(generatorSaturated.count) of \(window.count) \(rose ? "slow " : "")intervals (\(generatorText))"
            if serverSaturated { text += "; the server was at its limit too: " + findings.joined(separator: ", ") }
            return LimitAttribution(limitedBy: .generator, evidence: text, windowStart: span?.0, windowEnd: span?.1)
        }
        if sources.isEmpty {
            return LimitAttribution(
                limitedBy: .unknown,
                evidence: "\(headline): server side unseen (no --monitor); the generator was not saturated (\(generatorText))",
                windowStart: span?.0, windowEnd: span?.1)
        }
        if serverSaturated {
            var text = "\(headline): server-bound — " + findings.joined(separator: ", ")
            if generatorLimited {
                text += "; the generator saturated too (\(generatorText)), too little to explain it"
            }
            return LimitAttribution(limitedBy: .server, evidence: text, windowStart: span?.0, windowEnd: span?.1)
        }
        if window.isEmpty || seen.count * 2 < window.count {
            let reasons = Set(sources.flatMap { source in window.compactMap { source.reading($0)?.gap?.reason.rawValue } })
            let why = reasons.isEmpty ? "no monitor interval matched" : "gaps: " + reasons.sorted().joined(separator: ", ")
            return LimitAttribution(
                limitedBy: .unknown,
                evidence: "\(headline): server side unseen\(windowText) (\(why)); the generator was not saturated (\(generatorText))",
                windowStart: span?.0, windowEnd: span?.1)
        }
        let sides = (peaks.isEmpty ? [] : [peaks.joined(separator: ", ")]) + ["generator \(generatorText)"]
        if rose {
            return LimitAttribution(
                limitedBy: .unknown,
                evidence: "\(headline): latency rose\(windowText), but neither side saturated — " + sides.joined(separator: "; "),
                windowStart: span?.0, windowEnd: span?.1)
        }
        return LimitAttribution(limitedBy: .none, evidence: "\(headline): no limit reached — " + sides.joined(separator: "; "))
    }

    /// `loop lag p99 ≤ 4 ms, CPU ≤ 60 % of 2 cores` from the window's health values.
    static func describeGenerator(_ healths: [GeneratorHealth]) -> String {
        guard !healths.isEmpty else { return "no health recorded" }
        let lag = healths.map(\.loopLagP99Milliseconds).max() ?? 0
        let cpu = healths.map(\.cpuPercent).max() ?? 0
        let cores = healths.map(\.cores).max() ?? 1
        return "loop lag p99 up to \(formatLatency(lag)), CPU up to \(percent(cpu)) of \(coreText(cores))"
    }

    static func total(_ values: [String: Double], prefix: String) -> Double {
        values.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +)
    }

    /// `237 ms`, `10.6 s`.
    public static func formatLatency(_ milliseconds: Double) -> String {
        if milliseconds >= 1000 { return String(format: "%.1f s", milliseconds / 1000) }
        if milliseconds >= 10 { return String(format: "%.0f ms", milliseconds) }
        return String(format: "%.1f ms", milliseconds)
    }

    static func percent(_ value: Double) -> String { String(format: "%.0f %%", value) }
    static func seconds(_ value: Double) -> String { String(format: "%.0f s", value) }
    static func coreText(_ cores: Int) -> String { cores == 1 ? "1 core" : "\(cores) cores" }
    static func count(_ value: Double) -> String { String(format: "%.0f", value) }
    static func bytes(_ value: UInt64) -> String { String(format: "%.1f MiB", Double(value) / 1_048_576) }
}

extension LimitAttribution.Source {
    /// The reading of interval `index`; nil when none (or past the end).
    func reading(_ index: Int) -> MonitorReading? { readings.indices.contains(index) ? readings[index] : nil }
}
