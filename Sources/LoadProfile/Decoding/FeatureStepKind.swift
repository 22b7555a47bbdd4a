/// How the steps of one session feature are written in a profile — the decoder's row for them: the
/// step key, the feature it belongs to, its operation(s), its settings and its metric name. A row is
/// data; `ProfileDecoder.decodeFeatureStep` decodes every row alike (every problem reported with its
/// place), so a new feature's steps need one row in `FeatureStepKind.rows` and nothing else here.
public struct FeatureStepKind: Sendable {
    /// How a step's value is written.
    public enum Form: Sendable {
        /// `key: choice` names the operation; bare `key` means `bare` (nil: the value is required).
        case operation(choices: [String], bare: String?)
        /// `key`, `key: {fields…}`, or `key: value` for the `shorthand` field; the one `operation`.
        /// Bare `key` only when no field is required.
        case settings(operation: String, fields: [Field], shorthand: String?)
    }

    /// One setting of the `settings` form.
    public struct Field: Sendable {
        public enum Kind: Sendable {
            /// Text with `${variables}`.
            case template
            /// Plain text, not empty.
            case text
            /// A whole number in `range`.
            case number(ClosedRange<Int>)
        }

        public var name: String
        public var kind: Kind
        /// nil: no default (absent unless written).
        public var defaultValue: FeatureSetting?
        public var required: Bool

        public init(_ name: String, _ kind: Kind, default defaultValue: FeatureSetting? = nil, required: Bool = false) {
            self.name = name
            self.kind = kind
            self.defaultValue = defaultValue
            self.required = required
        }
    }

    /// The profile's step key.
    public var key: String
    /// The feature the step belongs to (`FeatureStep.feature`).
    public var feature: String
    /// The step's default metric name; `{operation}` stands for its operation.
    public var metric: String
    public var form: Form

    public init(key: String, feature: String, metric: String, form: Form) {
        self.key = key
        self.feature = feature
        self.metric = metric
        self.form = form
    }

    /// Whether `- key` alone is a step.
    var mayBeBare: Bool {
        switch form {
        case .operation(_, let bare): return bare != nil
        case .settings(_, let fields, _): return !fields.contains(where: \.required)
        }
    }

    /// Every metric name a step of this row can have.
    public var metricNames: [String] {
        switch form {
        case .operation(let choices, _): return choices.map { metric.replacingOccurrences(of: "{operation}", with: $0) }
        case .settings(let operation, _, _): return [metric.replacingOccurrences(of: "{operation}", with: operation)]
        }
    }
}
