import Foundation

/// What every monitored source showed over one interval of the run, on the run's clock.
///
/// `start`/`end` are seconds since the run's start, the same grid as the load's intervals
/// (`IntervalSnapshot`), so charts line up; each source's own measurement span is in its sample
/// (`ProcessSample.seconds`, `SeriesSample.seconds`). Written as its own line of intervals.jsonl
/// (`{"event":"monitor", …}`, told apart from load intervals by its `event` key, as control events
/// are), because a slow scrape may finish after the load's interval was written.
///
/// **Merging** (several generators of one run, `report DIR…`): the generators watched the same server,
/// so a source is one source, not a sum — for each label the first sample is kept, a sample wins over
/// a gap, and sources only one generator watched are added. Events are kept once each.
public struct MonitorInterval: Sendable, Equatable, Codable {
    /// Always `"monitor"`: what tells this line of intervals.jsonl from a load interval.
    public var event = "monitor"
    public var start: Double
    public var end: Double
    /// Each source's reading, by label.
    public var sources: [String: MonitorReading]
    /// Restarts, exits and appearances seen at this interval's end; nil when none.
    public var events: [MonitorEvent]?

    public init(start: Double, end: Double, sources: [String: MonitorReading], events: [MonitorEvent]? = nil) {
        self.start = start
        self.end = end
        self.sources = sources
        self.events = events
    }

    /// The same interval as seen by another generator (see the type's documentation).
    public mutating func merge(_ other: MonitorInterval) {
        start = min(start, other.start)
        end = max(end, other.end)
        for (label, reading) in other.sources {
            switch sources[label] {
            case nil: sources[label] = reading
            case .gap?: if reading.gap == nil { sources[label] = reading }
            default: break
            }
        }
        if let more = other.events {
            var merged = events ?? []
            for event in more where !merged.contains(event) { merged.append(event) }
            events = merged.isEmpty ? nil : merged
        }
    }

    /// The interval as one line of intervals.jsonl (keys sorted, newline-terminated).
    public var line: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(self)) ?? Data("{\"event\":\"monitor\"}".utf8)
        data.append(0x0A)
        return data
    }

    /// Reads a line of intervals.jsonl; nil when it is not a monitor line.
    public static func decode(line: Data) -> MonitorInterval? {
        guard line.range(of: Data("\"event\":\"monitor\"".utf8)) != nil,
            let interval = try? JSONDecoder().decode(MonitorInterval.self, from: line), interval.event == "monitor"
        else {
            return nil
        }
        return interval
    }

    /// Every monitor line of an intervals.jsonl file's contents, in the file's order (load intervals,
    /// control events and a last line cut short by a crash are skipped).
    public static func lines(in contents: Data) -> [MonitorInterval] {
        contents.split(separator: 0x0A).compactMap { decode(line: Data($0)) }
    }
}
