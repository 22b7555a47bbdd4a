/// One entry of a Prometheus monitor's `keep=` list: which series of a scrape to keep, and whether
/// to add them up.
///
/// Forms (docs/MONITORING.md):
/// - `NAME` — every series whose sample name or metric family is `NAME`;
/// - `PREFIX*` — every series whose sample name starts with `PREFIX`;
/// - `NAME{label="value",label!="value"}` — only series whose labels match every matcher (a label
///   that is absent counts as `""`, as in Prometheus);
/// - `sum(SERIES)` — the matching series added into one (`sum(NAME{…})` is its key);
/// - `sum by (label,…) (SERIES)` — added per distinct value of the listed labels.
///
/// Names follow Prometheus (`[a-zA-Z_:][a-zA-Z0-9_:]*`), label names `[a-zA-Z_][a-zA-Z0-9_]*`;
/// values are double-quoted with `\"`, `\\` and `\n` escapes.
public struct SeriesSelector: Sendable, Hashable, Codable {
    /// How a label is compared.
    public enum Comparison: String, Sendable, Hashable, Codable {
        case equal = "="
        case notEqual = "!="
    }

    /// `label="value"` or `label!="value"`.
    public struct LabelMatcher: Sendable, Hashable, Codable {
        public var label: String
        public var comparison: Comparison
        public var value: String

        public init(label: String, comparison: Comparison, value: String) {
            self.label = label
            self.comparison = comparison
            self.value = value
        }

        /// Whether `labels` satisfy this matcher (an absent label reads as "").
        public func matches(_ labels: [(name: String, value: String)]) -> Bool {
            let actual = labels.first { $0.name == label }?.value ?? ""
            return (actual == value) == (comparison == .equal)
        }
    }

    /// Adding the matching series up.
    public enum Aggregation: Sendable, Hashable, Codable {
        /// Every matching series into one.
        case sum
        /// One sum per distinct value of these labels (in this order).
        case sumBy([String])
    }

    /// The sample name or family name to match (without the `*` of a prefix).
    public var name: String
    /// True: `name` is a prefix of the sample name (`PREFIX*`).
    public var isPrefix: Bool
    public var matchers: [LabelMatcher]
    public var aggregation: Aggregation?

    public init(name: String, isPrefix: Bool = false, matchers: [LabelMatcher] = [], aggregation: Aggregation? = nil) {
        self.name = name
        self.isPrefix = isPrefix
        self.matchers = matchers
        self.aggregation = aggregation
    }

    /// Whether a sample of `family` named `sampleName` with `labels` is selected.
    public func matches(sampleName: String, family: String, labels: [(name: String, value: String)]) -> Bool {
        let nameMatches = isPrefix ? sampleName.hasPrefix(name) : (sampleName == name || family == name)
        return nameMatches && matchers.allSatisfy { $0.matches(labels) }
    }

    /// The series key a selected sample is kept under: its own (`name{labels}`, labels sorted), or the
    /// aggregation's (`sum(NAME{…})`, `sum by (mode) (NAME{…}){mode="idle"}`).
    public func key(sampleName: String, labels: [(name: String, value: String)]) -> String {
        switch aggregation {
        case nil:
            return SeriesSelector.seriesKey(name: sampleName, labels: labels)
        case .sum:
            return "sum(\(seriesText(sampleName: sampleName)))"
        case .sumBy(let by):
            let kept = by.map { label in (name: label, value: labels.first { $0.name == label }?.value ?? "") }
            return "sum by (\(by.joined(separator: ","))) (\(seriesText(sampleName: sampleName)))" + SeriesSelector.labelText(kept)
        }
    }

    /// The selector as written (canonical form).
    public var text: String {
        let series = (isPrefix ? name + "*" : name) + (matchers.isEmpty ? "" : "{" + matcherText + "}")
        switch aggregation {
        case nil: return series
        case .sum: return "sum(\(series))"
        case .sumBy(let by): return "sum by (\(by.joined(separator: ","))) (\(series))"
        }
    }

    /// A prefix selector's sum names the prefix; a plain one the sample name it matched (a family
    /// selects several sample names, each its own sum).
    private func seriesText(sampleName: String) -> String {
        (isPrefix ? name + "*" : sampleName) + (matchers.isEmpty ? "" : "{" + matcherText + "}")
    }

    private var matcherText: String {
        matchers.map { "\($0.label)\($0.comparison.rawValue)\"\(SeriesSelector.escape($0.value))\"" }.joined(separator: ",")
    }

    /// `name{a="1",b="2"}` with labels sorted by name; `name` alone when there are none.
    public static func seriesKey(name: String, labels: [(name: String, value: String)]) -> String {
        name + labelText(labels.sorted { $0.name < $1.name })
    }

    static func labelText(_ labels: [(name: String, value: String)]) -> String {
        labels.isEmpty ? "" : "{" + labels.map { "\($0.name)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
