import Yams

/// The protocol-extension steps (`ExtensionStep`): `carbons`, `csi`, `mam`, `pep` — their settings
/// and their metric names.
extension ProfileDecoder {
    /// The PEP node `pep` publishes to when the step names none.
    static let defaultPEPNode = "urn:xmppload:load:0"

    /// `carbons` (enable), `carbons: enable` or `carbons: disable`.
    mutating func decodeCarbonsStep(_ value: Node?) -> (StepAction, String)? {
        var choice = "enable"
        if let value, !Self.isNull(value) {
            guard let chosen = oneOf(value, "carbons", ["enable", "disable"]) else { return nil }
            choice = chosen
        }
        return (.protocolExtension(.carbons(enable: choice == "enable")), "carbons.\(choice)")
    }

    /// `csi: active` or `csi: inactive`.
    mutating func decodeClientStateStep(_ value: Node?, node: Node) -> (StepAction, String)? {
        guard let value, !Self.isNull(value) else {
            problem(node, "csi needs a state", hint: "write `csi: inactive` (or `csi: active`)")
            return nil
        }
        guard let state = oneOf(value, "csi", ["active", "inactive"]) else { return nil }
        return (.protocolExtension(.clientState(active: state == "active")), "csi.\(state)")
    }

    /// `mam`, or `mam: {max: N, with: JID}` (max 1…1000, default 20).
    mutating func decodeArchiveStep(_ value: Node?) -> (StepAction, String)? {
        guard let value, !Self.isNull(value) else { return (.protocolExtension(.archiveQuery(max: 20, with: nil)), "mam.query") }
        guard let map = mapping(value, "mam") else { return nil }
        checkKeys(map, allowed: ["max", "with"], "mam")
        let max = map["max"].map { int($0, "mam.max", minimum: 1, maximum: 1000) } ?? 20
        let with = map["with"].map { template($0, "mam.with") }
        guard let max, with.map({ $0 != nil }) ?? true else { return nil }
        return (.protocolExtension(.archiveQuery(max: max, with: with ?? nil)), "mam.query")
    }

    /// `pep`, or `pep: {node: N, payload_size: B}` (B 0…65536, default 128).
    mutating func decodePublishStep(_ value: Node?) -> (StepAction, String)? {
        guard let value, !Self.isNull(value) else {
            return (.protocolExtension(.publish(node: Self.defaultPEPNode, payloadBytes: 128)), "pep.publish")
        }
        guard let map = mapping(value, "pep") else { return nil }
        checkKeys(map, allowed: ["node", "payload_size"], "pep")
        let node = map["node"].map { string($0, "pep.node") } ?? Self.defaultPEPNode
        let size = map["payload_size"].map { int($0, "pep.payload_size", minimum: 0, maximum: 65536) } ?? 128
        guard let node, let size else { return nil }
        guard !node.isEmpty else {
            problem(value, "pep.node must not be empty")
            return nil
        }
        return (.protocolExtension(.publish(node: node, payloadBytes: size)), "pep.publish")
    }
}
