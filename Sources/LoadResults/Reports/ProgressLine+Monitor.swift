import Foundation

extension ProgressLine {
    /// The monitors' part of a progress line, one short item per source: a process as
    /// `prosody 98%/1c 112 MiB` (CPU in percent of one core / the cores it can use, resident memory;
    /// `*` when a restart made the sample partial), a scrape only when it has something to say
    /// (`node listen-overflows 412`), a gap as `prosody gap (exited)` — never as zeros. "" when the
    /// interval has no source.
    public static func monitorText(_ interval: MonitorInterval) -> String {
        interval.sources.keys.sorted().compactMap { label -> String? in
            switch interval.sources[label]! {
            case .process(let sample):
                let memory = String(format: "%.0f MiB", Double(sample.rssBytes) / 1_048_576)
                return "\(label) \(String(format: "%.0f", sample.cpuPercent))%/\(sample.usableCores)c \(memory)"
                    + (sample.partial == true ? "*" : "")
            case .series(let sample):
                let overflows =
                    MonitorTimeline.attributionPrefixes.first.map { prefix in
                        sample.increases.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +)
                    } ?? 0
                return overflows > 0 ? "\(label) listen-overflows \(String(format: "%.0f", overflows))" : nil
            case .gap(let gap):
                return "\(label) gap (\(gap.reason.rawValue))"
            }
        }.joined(separator: "  ")
    }
}
