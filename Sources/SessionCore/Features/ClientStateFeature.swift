import LoadProfile
// XEP-0352 client state indication as a request feature: `csi: active|inactive`.
import LoadResults
import XMPPCore

/// Client state indication (XEP-0352): `csi: inactive` or `csi: active` sends the nonza; nothing
/// answers it, so the step completes unmeasured. A server whose stream features after authentication
/// did not offer `urn:xmpp:csi:0` gets nothing: the step completes, counted as `csi_unsupported`
/// (notice `csi-unsupported`).
final class ClientStateFeature: RequestFeature {
    static let name = "csi"
    static let namespace = "urn:xmpp:csi:0"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("csi_unsupported", .unsupported(feature: "csi", title: "XEP-0352 client state indication"))
    ]
    /// The login's stream features offered CSI.
    private var offered = false

    init() {}

    func loggedIn(_ result: LoginResult) { offered = result.offersClientState }

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        guard offered else {
            context.count(0, &s)
            return .completed(measured: false)
        }
        s.send(XMLElement(step.operation == "active" ? "active" : "inactive", namespace: Self.namespace))
        return .completed(measured: false)
    }

    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome? { nil }
}
