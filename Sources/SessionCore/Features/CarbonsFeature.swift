import LoadProfile
// XEP-0280 message carbons as a request feature: `carbons: enable|disable`.
import LoadResults
import XMPPCore

/// Message carbons (XEP-0280): `carbons` (enable) or `carbons: enable|disable` sends the iq set and
/// waits for its result, timed (`carbons.enable`); a server without carbons answers
/// `service-unavailable` (or `feature-not-implemented`): the step completes unmeasured, counted as
/// `carbons_unsupported` and said as the notice `carbons-unsupported`.
final class CarbonsFeature: RequestFeature {
    static let name = "carbons"
    static let namespace = "urn:xmpp:carbons:2"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("carbons_unsupported", .unsupported(feature: "carbons", title: "XEP-0280 message carbons"))
    ]
    private var awaited: UInt32 = 0

    init() {}

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        _ = context.tools.nextRequestID()
        awaited = context.tools.requestCounter
        let change = XMLElement(step.operation == "disable" ? "disable" : "enable", namespace: Self.namespace)
        s.send(Stanza.iq(type: "set", id: "q\(awaited)", child: change))
        return .waiting(timeout: context.timeout)
    }

    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome? {
        guard let outcome = context.iqAnswer(stanza, to: awaited, unsupported: 0, &s) else { return nil }
        awaited = 0
        return outcome
    }
}
