import LoadResults
import NIOCore

/// Reads a Prometheus text exposition (format 0.0.4) or an OpenMetrics 1.0 text body and returns
/// the samples a monitor keeps, each with whether it is a counter. Pure, over bytes, bounded:
/// a body with more samples than `ScrapeLimits.maxSamples`, a longer line, or any line that is
/// neither a comment nor a sample fails the whole scrape (as Prometheus does), and the kept series
/// are capped (`admit`).
///
/// Which samples are counters: a family's `# TYPE` (`counter`; a histogram's or summary's `_bucket`,
/// `_count` and `_sum`; OpenMetrics' `_total`); `_created` samples are timestamps and skipped; an
/// untyped (or `unknown`) sample is a counter when its name ends in `_total` or it is one of
/// node_exporter's untyped counters (`node_netstat_*` but `*_CurrEstab`, `node_vmstat_*`), else a
/// gauge; everything else is a gauge.
enum ExpositionParser {
    /// One kept sample.
    struct Sample: Sendable, Equatable {
        /// The series itself (`name{labels}`, labels sorted).
        var series: String
        /// Where it is kept: `series`, or its selector's `sum(…)` key.
        var key: String
        var family: String
        var isCounter: Bool
        var value: Double
    }

    /// Why a body was refused.
    enum Failure: Error, Sendable, Equatable {
        case tooManySamples(limit: Int)
        case malformed(line: Int, problem: String)
        /// Parsing went past the scrape's deadline (the time limit covers the parse too).
        case pastDeadline(line: Int)
    }

    /// What a parse found: the kept samples, how many samples the body held, and how many selected
    /// series were not kept because a limit was reached.
    struct Result: Sendable, Equatable {
        var samples: [Sample] = []
        var seen = 0
        var dropped = 0
    }

    /// Parses `body`, keeping samples that `selectors` select (nil: all). `known` are series kept
    /// before: they are always admitted (their slots are reserved), new ones only while fewer than
    /// `limits.maxKeptSeries` series and `limits.maxSeriesPerFamily` per family are kept.
    /// `deadline` bounds the parse's time (checked every 1,024 lines).
    static func parse(
        _ body: [UInt8], selectors: [SeriesSelector]?, limits: ScrapeLimits, known: Set<String> = [], deadline: NIODeadline? = nil
    ) throws(Failure) -> Result {
        var result = Result()
        var types: [String: String] = [:]
        var keptSeries = Set<String>()
        var newAdmitted = 0
        var perFamily: [String: Int] = [:]
        let newCapacity = max(0, limits.maxKeptSeries - known.count)
        var lineNumber = 0
        var start = 0
        while start < body.count {
            lineNumber += 1
            if lineNumber & 1023 == 0, let deadline, NIODeadline.now() > deadline { throw .pastDeadline(line: lineNumber) }
            var end = start
            while end < body.count && body[end] != 0x0A { end += 1 }
            if end - start > limits.maxLineBytes {
                throw .malformed(line: lineNumber, problem: "a line longer than \(limits.maxLineBytes) bytes")
            }
            var lineEnd = end
            if lineEnd > start && body[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            defer { start = end + 1 }
            if lineEnd == start { continue }
            if body[start] == 0x23 {  // '#'
                var cursor = Cursor(body, start, lineEnd)
                cursor.index += 1
                cursor.skipSpaces()
                let word = cursor.word()
                if word == "EOF" { break }
                if word == "TYPE" {
                    cursor.skipSpaces()
                    let name = cursor.word()
                    cursor.skipSpaces()
                    let type = cursor.word()
                    guard !name.isEmpty, !type.isEmpty else { throw .malformed(line: lineNumber, problem: "a # TYPE line without a name and type") }
                    if types.count < limits.maxSamples { types[name] = type }
                }
                continue
            }
            result.seen += 1
            if result.seen > limits.maxSamples { throw .tooManySamples(limit: limits.maxSamples) }
            var cursor = Cursor(body, start, lineEnd)
            let sample: (name: String, labels: [(name: String, value: String)], value: Double)
            do {
                let name = try cursor.name()
                // A sample no selector can match (their names are prefixes of what they select) is
                // not read further: a large exposition costs little beyond the lines it keeps.
                if let selectors, !selectors.contains(where: { name.hasPrefix($0.name) }) { continue }
                sample = try cursor.sample(named: name, maxLabels: limits.maxLabelsPerSeries)
            } catch {
                throw .malformed(line: lineNumber, problem: error.problem)
            }
            guard let (family, isCounter) = classify(sample.name, types: types) else { continue }
            guard sample.value.isFinite else { continue }
            var key: String?
            if let selectors {
                for selector in selectors where selector.matches(sampleName: sample.name, family: family, labels: sample.labels) {
                    key = selector.key(sampleName: sample.name, labels: sample.labels)
                    break
                }
            } else {
                key = SeriesSelector.seriesKey(name: sample.name, labels: sample.labels)
            }
            guard let key else { continue }
            let series = SeriesSelector.seriesKey(name: sample.name, labels: sample.labels)
            if !keptSeries.contains(series) {
                if !known.contains(series) {
                    guard newAdmitted < newCapacity, perFamily[family, default: 0] < limits.maxSeriesPerFamily else {
                        result.dropped += 1
                        continue
                    }
                    newAdmitted += 1
                }
                perFamily[family, default: 0] += 1
                keptSeries.insert(series)
            }
            result.samples.append(Sample(series: series, key: key, family: family, isCounter: isCounter, value: sample.value))
        }
        return result
    }

    /// The sample's family and whether it is a counter; nil: skip it (`_created`).
    static func classify(_ name: String, types: [String: String]) -> (family: String, isCounter: Bool)? {
        if let type = types[name] {
            switch type {
            case "counter": return (name, true)
            case "untyped", "unknown": return (name, isUntypedCounter(name))
            default: return (name, false)
            }
        }
        for suffix in ["_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"] where name.hasSuffix(suffix) {
            let family = String(name.dropLast(suffix.count))
            guard let type = types[family] else { continue }
            if suffix == "_created" { return nil }
            switch (type, suffix) {
            case ("counter", "_total"): return (family, true)
            case ("histogram", "_bucket"), ("histogram", "_count"), ("histogram", "_sum"): return (family, true)
            case ("summary", "_count"), ("summary", "_sum"): return (family, true)
            default: return (family, false)
            }
        }
        return (name, isUntypedCounter(name))
    }

    /// An untyped series that only ever goes up: `_total`, or node_exporter's untyped /proc counters.
    static func isUntypedCounter(_ name: String) -> Bool {
        name.hasSuffix("_total") || (name.hasPrefix("node_netstat_") && !name.hasSuffix("_CurrEstab"))
            || name.hasPrefix("node_vmstat_")
    }

    /// A problem in one line.
    struct LineError: Error {
        var problem: String
    }

    /// A cursor over one line's bytes.
    struct Cursor {
        let bytes: [UInt8]
        var index: Int
        let end: Int

        init(_ bytes: [UInt8], _ start: Int, _ end: Int) {
            self.bytes = bytes
            index = start
            self.end = end
        }

        var atEnd: Bool { index >= end }

        mutating func skipSpaces() { while index < end && (bytes[index] == 0x20 || bytes[index] == 0x09) { index += 1 } }

        /// A run of non-space bytes.
        mutating func word() -> String {
            let start = index
            while index < end && bytes[index] != 0x20 && bytes[index] != 0x09 { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x3A
                || (!first && byte >= 0x30 && byte <= 0x39)
        }

        mutating func name() throws(LineError) -> String {
            let start = index
            guard index < end, Self.isNameByte(bytes[index], first: true) else { throw LineError(problem: "not a metric name or comment") }
            while index < end && Self.isNameByte(bytes[index], first: index == start) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// The rest of a sample line after its `name`: labels, value (a timestamp or exemplar after it is ignored).
        mutating func sample(
            named name: String, maxLabels: Int
        ) throws(LineError) -> (
            name: String, labels: [(name: String, value: String)], value: Double
        ) {
            var labels: [(name: String, value: String)] = []
            if index < end && bytes[index] == 0x7B {  // '{'
                index += 1
                skipSpaces()
                while index < end && bytes[index] != 0x7D {
                    let label = try self.name()
                    skipSpaces()
                    guard index < end, bytes[index] == 0x3D else { throw LineError(problem: "expected = after label \(label)") }
                    index += 1
                    skipSpaces()
                    guard index < end, bytes[index] == 0x22 else { throw LineError(problem: "label \(label)'s value is not quoted") }
                    index += 1
                    var value: [UInt8] = []
                    while index < end && bytes[index] != 0x22 {
                        if bytes[index] == 0x5C, index + 1 < end {
                            index += 1
                            value.append(bytes[index] == 0x6E ? 0x0A : bytes[index])
                        } else {
                            value.append(bytes[index])
                        }
                        index += 1
                    }
                    guard index < end else { throw LineError(problem: "label \(label)'s value has no closing quote") }
                    index += 1
                    labels.append((label, String(decoding: value, as: UTF8.self)))
                    if labels.count > maxLabels { throw LineError(problem: "a series with more than \(maxLabels) labels") }
                    skipSpaces()
                    if index < end && bytes[index] == 0x2C {
                        index += 1
                        skipSpaces()
                    } else if index < end && bytes[index] != 0x7D {
                        throw LineError(problem: "expected , or } in the labels")
                    }
                }
                guard index < end else { throw LineError(problem: "the labels' } is missing") }
                index += 1
            }
            guard index < end, bytes[index] == 0x20 || bytes[index] == 0x09 else { throw LineError(problem: "no value after the series") }
            skipSpaces()
            let text = word()
            guard let value = Double(text) else { throw LineError(problem: "\"\(text.prefix(40))\" is not a number") }
            return (name, labels, value)
        }
    }
}
