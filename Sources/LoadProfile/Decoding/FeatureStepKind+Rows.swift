/// The feature steps' decoder rows: one per step key (a feature may have several keys).
extension FeatureStepKind {
    /// The PEP node `pep` publishes to when the step names none.
    public static let defaultPEPNode = "urn:xmppload:load:0"

    public static let rows: [FeatureStepKind] = [
        // XEP-0280 message carbons: `carbons` (enable), `carbons: enable|disable`.
        FeatureStepKind(
            key: "carbons", feature: "carbons", metric: "carbons.{operation}", form: .operation(choices: ["enable", "disable"], bare: "enable")),
        // XEP-0352 client state indication: `csi: active|inactive`.
        FeatureStepKind(key: "csi", feature: "csi", metric: "csi.{operation}", form: .operation(choices: ["active", "inactive"], bare: nil)),
        // XEP-0313 one archive page: `mam`, `mam: {max: N, with: JID}`.
        FeatureStepKind(
            key: "mam", feature: "mam", metric: "mam.query",
            form: .settings(
                operation: "query", fields: [.init("max", .number(1...1000), default: .number(20)), .init("with", .template)], shorthand: nil)),
        // XEP-0163 a PEP publish: `pep`, `pep: {node: N, payload_size: B}`.
        FeatureStepKind(
            key: "pep", feature: "pep", metric: "pep.publish",
            form: .settings(
                operation: "publish",
                fields: [
                    .init("node", .text, default: .text(defaultPEPNode)), .init("payload_size", .number(0...65536), default: .number(128)),
                ], shorthand: nil)),
        // XEP-0191 blocking command: `block: JID`, `unblock: JID` (bare: everyone), `blocklist`.
        FeatureStepKind(
            key: "block", feature: "blocking", metric: "blocking.block",
            form: .settings(operation: "block", fields: [.init("jid", .template, required: true)], shorthand: "jid")),
        FeatureStepKind(
            key: "unblock", feature: "blocking", metric: "blocking.unblock",
            form: .settings(operation: "unblock", fields: [.init("jid", .template)], shorthand: "jid")),
        FeatureStepKind(
            key: "blocklist", feature: "blocking", metric: "blocking.list", form: .settings(operation: "list", fields: [], shorthand: nil)),
    ]

    static let byKey: [String: FeatureStepKind] = Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) })
}
