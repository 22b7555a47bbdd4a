/// Pairs the load's intervals with the monitor's, both on the run's clock: each load interval gets
/// the monitor interval that overlaps it most, if that overlap covers at least half of it. A monitor
/// interval serves at most one load interval. Pure; the lists may come in any order. Linear after
/// sorting (a soak has thousands of intervals on each side).
public enum MonitorAlignment {
    /// `monitor` arranged like `load`: the matching interval per load interval, or nil.
    public static func align(_ monitor: [MonitorInterval], to load: [LoadPoint]) -> [MonitorInterval?] {
        let sorted = monitor.sorted { $0.start < $1.start }
        // Monitor intervals before `low` end before the current load interval starts, so neither it
        // nor a later one (taken in order of start) can use them.
        var used = Set<Int>()
        var result = [MonitorInterval?](repeating: nil, count: load.count)
        let order = load.indices.sorted { load[$0].start < load[$1].start }
        var low = 0
        for position in order {
            let point = load[position]
            while low < sorted.count, sorted[low].end <= point.start { low += 1 }
            var best: (index: Int, overlap: Double)?
            var index = low
            while index < sorted.count {
                let interval = sorted[index]
                if interval.start >= point.end { break }
                if !used.contains(index) {
                    let overlap = min(point.end, interval.end) - max(point.start, interval.start)
                    if overlap > 0, overlap > (best?.overlap ?? 0) { best = (index, overlap) }
                }
                index += 1
            }
            guard let best, best.overlap >= 0.5 * point.seconds else { continue }
            used.insert(best.index)
            result[position] = sorted[best.index]
        }
        return result
    }

    /// One source's readings arranged like `load` (nil where no monitor interval matched or the
    /// source was not in it).
    public static func readings(of label: String, in aligned: [MonitorInterval?]) -> [MonitorReading?] {
        aligned.map { $0?.sources[label] }
    }
}
