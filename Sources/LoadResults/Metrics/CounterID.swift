/// A dense index for a counter a session feature registered (`MetricRegistry.registerCounter`):
/// recorders index an array with it, as with the fixed `Counter`s, whose indices come first.
public struct CounterID: Hashable, Sendable {
    public let index: Int
}

/// What a registered counter's non-zero count tells a person (a feature the server lacks, what the
/// session did instead): a stable `kind` and a `text` in which `{count}` stands for the count. It
/// travels with the counter in the interval snapshots (`IntervalSnapshot.counterNotices`), so the
/// summary, a merged `report` of several generators and report.html say it without knowing the
/// feature that registered it (`ServerNotice.notices`).
public struct CounterNotice: Codable, Sendable, Equatable, Hashable {
    public var kind: String
    public var text: String

    public init(kind: String, text: String) {
        self.kind = kind
        self.text = text
    }

    /// The notice for `count` occurrences.
    public func text(count: UInt64) -> String { text.replacingOccurrences(of: "{count}", with: String(count)) }

    /// The usual notice of a protocol feature the server does not support: kind `<feature>-unsupported`.
    public static func unsupported(feature: String, title: String) -> CounterNotice {
        CounterNotice(
            kind: "\(feature)-unsupported",
            text:
                "the server does not support \(title) (an error answer, or not among the stream features) for {count} step(s); those steps completed unmeasured"
        )
    }
}
