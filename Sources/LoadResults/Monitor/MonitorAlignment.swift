/// Pairs the load's intervals with the monitor's, both on the run's clock: each load interval gets
/// the monitor interval that overlaps it most, if that overlap covers at least half of it. A monitor
/// interval serves at most one load interval. Pure; the lists may come in any order.
public enum MonitorAlignment {
    /// `monitor` arranged like `load`: the matching interval per load interval, or nil.
    public static func align(_ monitor: [MonitorInterval], to load: [LoadPoint]) -> [MonitorInterval?] {
        let sorted = monitor.sorted { $0.start < $1.start }
        var used = Set<Int>()
        return load.map { point in
            var best: (index: Int, overlap: Double)?
            for (index, interval) in sorted.enumerated() where !used.contains(index) {
                if interval.start >= point.end { break }
                let overlap = min(point.end, interval.end) - max(point.start, interval.start)
                if overlap > 0, overlap > (best?.overlap ?? 0) { best = (index, overlap) }
            }
            guard let best, best.overlap >= 0.5 * point.seconds else { return nil }
            used.insert(best.index)
            return sorted[best.index]
        }
    }

    /// One source's readings arranged like `load` (nil where no monitor interval matched or the
    /// source was not in it).
    public static func readings(of label: String, in aligned: [MonitorInterval?]) -> [MonitorReading?] {
        aligned.map { $0?.sources[label] }
    }
}
