/// One source's result for one interval: a process sample, a scrape's series, or a gap with its reason.
///
/// Encoded as an object with one key naming the case — `{"process": {…}}`, `{"series": {…}}`,
/// `{"gap": {"reason": "timeout", "detail": "…"}}` — so `jq '.sources.prosody.process.cpu_percent'`
/// reads a chart straight from intervals.jsonl.
public enum MonitorReading: Sendable, Equatable, Codable {
    case process(ProcessSample)
    case series(SeriesSample)
    case gap(MonitorGap)

    /// The process sample, if this is one.
    public var process: ProcessSample? {
        if case .process(let sample) = self { return sample }
        return nil
    }

    /// The scrape, if this is one.
    public var series: SeriesSample? {
        if case .series(let sample) = self { return sample }
        return nil
    }

    /// The gap, if this is one.
    public var gap: MonitorGap? {
        if case .gap(let gap) = self { return gap }
        return nil
    }

    private enum CodingKeys: String, CodingKey { case process, series, gap }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let sample = try container.decodeIfPresent(ProcessSample.self, forKey: .process) {
            self = .process(sample)
        } else if let sample = try container.decodeIfPresent(SeriesSample.self, forKey: .series) {
            self = .series(sample)
        } else if let gap = try container.decodeIfPresent(MonitorGap.self, forKey: .gap) {
            self = .gap(gap)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a monitor reading needs process, series or gap"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .process(let sample): try container.encode(sample, forKey: .process)
        case .series(let sample): try container.encode(sample, forKey: .series)
        case .gap(let gap): try container.encode(gap, forKey: .gap)
        }
    }
}
