/// A step a session feature carries out — a protocol extension such as message carbons, client
/// state, an archive query, a PEP publish or a blocking-list change — as its decoder row
/// (`FeatureStepKind`) decoded it: which feature, which of its operations, and the step's settings as
/// plain values. The session core looks the feature up by name (`SessionFeatures`), so adding a
/// feature adds a row and a feature, never a case here.
///
/// Invariant: a decoded step has every setting its row declares with a default or as required, each
/// of the declared kind and within its bounds.
public struct FeatureStep: Sendable, Equatable {
    /// The feature's name (`carbons`, `csi`, `mam`, `pep`, `blocking`, …).
    public var feature: String
    /// The operation (`enable`, `query`, `block`, …).
    public var operation: String
    public var settings: [String: FeatureSetting]

    public init(feature: String, operation: String, settings: [String: FeatureSetting] = [:]) {
        self.feature = feature
        self.operation = operation
        self.settings = settings
    }

    /// The setting `name` when it is a template.
    public func template(_ name: String) -> Template? {
        if case .template(let value)? = settings[name] { return value }
        return nil
    }

    /// The setting `name` when it is a number.
    public func number(_ name: String) -> Int? {
        if case .number(let value)? = settings[name] { return value }
        return nil
    }

    /// The setting `name` when it is plain text.
    public func text(_ name: String) -> String? {
        if case .text(let value)? = settings[name] { return value }
        return nil
    }
}

/// One setting of a feature step.
public enum FeatureSetting: Sendable, Equatable {
    /// Plain text, used as written.
    case text(String)
    /// Text with `${variables}`, rendered per session.
    case template(Template)
    /// A whole number within the row's bounds.
    case number(Int)
}
