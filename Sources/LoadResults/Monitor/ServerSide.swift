/// What the monitors say about a whole run, from its timeline (`MergedResults.Timeline`): the
/// server's costs per unit of load (`ServerCosts`, one per process source) and who limited the run
/// (`LimitAttribution`). Pure; the run's judge and `report` call the same functions, so a report
/// rebuilt from a results directory says what the run said.
public enum ServerSide {
    /// The latency metrics the attribution may watch, in order of preference: the first whose
    /// latency rose is judged (a soak's messages may slow long after its logins); when none rose,
    /// the first measured.
    public static let watchedMetrics = ["login", "message"]

    /// Who limited the run. `latency`: the run's percentiles (`summary.json`'s `latency_ms`), for
    /// the headline's p99. Without a monitor: `unknown` (the server side unseen) unless the
    /// generator limited it.
    public static func attribution(_ timeline: MergedResults.Timeline, latency: [String: RunSummary.Percentiles]) -> LimitAttribution {
        let labels = timeline.monitor.labels
        // The load's own time: the final log-out and messages still in flight after the load
        // stopped are not the server giving out (as `OutageFinder` and `capacity` read it).
        let loadEnd = timeline.outageFinder.loadEnd
        func duringLoad(_ points: [LoadPoint]) -> [LoadPoint] {
            guard let loadEnd else { return points }
            let kept = points.filter { ($0.start + $0.end) / 2 < loadEnd }
            return kept.isEmpty ? points : kept
        }
        var first: LimitAttribution?
        for metric in watchedMetrics {
            guard let all = timeline.loadPoints[metric], all.contains(where: { $0.latencyCount > 0 }) else { continue }
            let load = duringLoad(all)
            let aligned = MonitorAlignment.align(timeline.monitor.intervals, to: load)
            let judged = LimitAttribution.judge(
                metric: metric, runP99Milliseconds: latency[metric]?.p99 ?? 0, load: load,
                sources: labels.map { LimitAttribution.Source(label: $0, readings: MonitorAlignment.readings(of: $0, in: aligned)) })
            if judged.windowStart != nil { return judged }
            if first == nil { first = judged }
        }
        if let first { return first }
        let load = duringLoad(timeline.loadPoints["login"] ?? [])
        let aligned = MonitorAlignment.align(timeline.monitor.intervals, to: load)
        return LimitAttribution.judge(
            metric: "login", runP99Milliseconds: latency["login"]?.p99 ?? 0, load: load,
            sources: labels.map { LimitAttribution.Source(label: $0, readings: MonitorAlignment.readings(of: $0, in: aligned)) })
    }

    /// The costs of every process source (nil when there is none with a sample).
    public static func costs(_ timeline: MergedResults.Timeline) -> [ServerCosts]? {
        let labels = timeline.monitor.processLabels
        guard !labels.isEmpty, let load = timeline.loadPoints["login"] else { return nil }
        let aligned = MonitorAlignment.align(timeline.monitor.intervals, to: load)
        let costs = labels.compactMap { ServerCosts.estimate(source: $0, load: load, readings: MonitorAlignment.readings(of: $0, in: aligned)) }
        return costs.isEmpty ? nil : costs
    }
}
