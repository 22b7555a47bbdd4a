import Yams

/// Feature steps (`FeatureStepKind` rows): one decoder for every row, by its form.
extension ProfileDecoder {
    /// Decodes `value` (nil: the bare key) by `kind`; every problem is reported at its place.
    mutating func decodeFeatureStep(_ kind: FeatureStepKind, _ value: Node?, node: Node) -> (StepAction, String)? {
        func named(_ operation: String) -> String { kind.metric.replacingOccurrences(of: "{operation}", with: operation) }
        switch kind.form {
        case .operation(let choices, let bare):
            guard let value, !Self.isNull(value) else {
                guard let bare else {
                    problem(node, "\(kind.key) needs one of \(choices.joined(separator: ", "))", hint: "write `\(kind.key): \(choices[0])`")
                    return nil
                }
                return (.feature(FeatureStep(feature: kind.feature, operation: bare)), named(bare))
            }
            guard let chosen = oneOf(value, kind.key, choices) else { return nil }
            return (.feature(FeatureStep(feature: kind.feature, operation: chosen)), named(chosen))
        case .settings(let operation, let fields, let shorthand):
            var settings: [String: FeatureSetting] = [:]
            for field in fields { if let value = field.defaultValue { settings[field.name] = value } }
            var ok = true
            if let value, !Self.isNull(value) {
                if case .scalar = value, let shorthand, let field = fields.first(where: { $0.name == shorthand }) {
                    if let decoded = decodeFeatureSetting(field, value, "\(kind.key)") { settings[field.name] = decoded } else { ok = false }
                } else {
                    guard let map = mapping(value, kind.key) else { return nil }
                    checkKeys(map, allowed: fields.map(\.name), kind.key)
                    for field in fields {
                        guard let fieldNode = map[field.name] else { continue }
                        if let decoded = decodeFeatureSetting(field, fieldNode, "\(kind.key).\(field.name)") {
                            settings[field.name] = decoded
                        } else {
                            ok = false
                        }
                    }
                }
            }
            for field in fields where field.required && settings[field.name] == nil {
                let example = shorthand == field.name ? "`\(kind.key): …`" : "`\(kind.key): {\(field.name): …}`"
                problem(value ?? node, "\(kind.key) needs \(field.name)", hint: "write \(example)")
                ok = false
            }
            guard ok else { return nil }
            return (.feature(FeatureStep(feature: kind.feature, operation: operation, settings: settings)), named(operation))
        }
    }

    private mutating func decodeFeatureSetting(_ field: FeatureStepKind.Field, _ node: Node, _ what: String) -> FeatureSetting? {
        switch field.kind {
        case .template:
            return template(node, what).map(FeatureSetting.template)
        case .text:
            guard let text = string(node, what) else { return nil }
            guard !text.isEmpty else {
                problem(node, "\(what) must not be empty")
                return nil
            }
            return .text(text)
        case .number(let range):
            return int(node, what, minimum: range.lowerBound, maximum: range.upperBound).map(FeatureSetting.number)
        }
    }
}
