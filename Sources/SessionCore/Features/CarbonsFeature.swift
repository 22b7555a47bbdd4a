import LoadProfile
// XEP-0280 message carbons as a request feature: `carbons: enable|disable`.
import LoadResults
import XMPPCore

/// Message carbons (XEP-0280): `carbons` (enable) or `carbons: enable|disable` sends the iq set and
/// waits for its result, timed (`carbons.enable`); a server without carbons answers
/// `service-unavailable` (or `feature-not-implemented`): the step completes unmeasured, counted as
/// `carbons_unsupported` and said as the notice `carbons-unsupported`. When the login enabled
/// carbons inline with Bind2 (XEP-0386; the profile's enable step asks the login for it), the
/// enable step sends nothing and completes unmeasured, counted as `carbons_inline`.
final class CarbonsFeature: RequestFeature {
    static let name = "carbons"
    static let namespace = "urn:xmpp:carbons:2"
    static let counters: [(name: String, notice: CounterNotice?)] = [
        ("carbons_unsupported", .unsupported(feature: "carbons", title: "XEP-0280 message carbons")),
        ("carbons_inline", nil),
    ]
    private var awaited: UInt32 = 0
    /// The login enabled carbons inline (Bind2); an enable step has nothing left to ask.
    private var enabledAtLogin = false

    init() {}

    func loggedIn(_ result: LoginResult) { enabledAtLogin = result.carbonsEnabled }

    func forget() {
        awaited = 0
        enabledAtLogin = false
    }

    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome {
        if step.operation != "disable" && enabledAtLogin {
            context.count(1, &s)
            return .completed(measured: false)
        }
        enabledAtLogin = false
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
