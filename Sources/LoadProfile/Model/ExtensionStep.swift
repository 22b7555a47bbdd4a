/// A step that uses a protocol extension modern clients rely on and the core steps lack: message
/// carbons (XEP-0280), client state indication (XEP-0352), a message archive query (XEP-0313) and a
/// personal eventing publish (XEP-0163 over XEP-0060).
///
/// A server without the extension (an error answer such as `service-unavailable`, or for CSI no
/// stream feature) is not a failed session: the step completes unmeasured, and the run counts and
/// says it (`ExtensionFeature.unsupportedCounterName`, notice `<feature>-unsupported`).
public enum ExtensionStep: Sendable, Equatable {
    /// `carbons: enable|disable`: an iq set of `<enable/>`/`<disable/>`, timed until its result.
    case carbons(enable: Bool)
    /// `csi: active|inactive`: the `<active/>`/`<inactive/>` nonza; nothing answers it, so unmeasured.
    case clientState(active: Bool)
    /// `mam: {max: N, with: JID}`: one page (at most `max` ≥ 1 messages) of the account's archive,
    /// timed until the query's result (`<fin/>`); the archived messages are counted.
    case archiveQuery(max: Int, with: Template?)
    /// `pep: {node: N, payload_size: B}`: publishes one item of `payloadBytes` bytes to the account's
    /// own PEP node `node`, timed until the result; a notification coming back is timed from the send.
    case publish(node: String, payloadBytes: Int)

    /// The extension the step needs.
    public var feature: ExtensionFeature {
        switch self {
        case .carbons: return .carbons
        case .clientState: return .clientState
        case .archiveQuery: return .archive
        case .publish: return .personalEventing
        }
    }
}

/// The protocol extensions of `ExtensionStep`; the raw value names them in counters and notices.
public enum ExtensionFeature: String, Sendable, CaseIterable {
    case carbons
    case clientState = "csi"
    case archive = "mam"
    case personalEventing = "pep"
}
