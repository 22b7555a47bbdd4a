// Queries as a session feature: ping, disco#info, version, vCard and raw iq steps.
import LoadProfile
import LoadResults
import XMPPCore

/// The query steps (`ping`, `disco_info`, `version`, `vcard`, and `raw` iqs): each sends one iq and,
/// except a `raw` that expects no result, waits for its answer (a result completes it, an error fails
/// it). The only state is the id of the request in flight.
struct QueryFeature {
    /// The number of the request in flight (`q<n>`; 0: none).
    private var awaited: UInt32 = 0

    mutating func start(_ action: IQAction, timeout: Duration, tools: inout StepTools, _ s: inout SessionShared) -> StepOutcome {
        let id = tools.nextRequestID()
        awaited = tools.requestCounter
        let request = StepRequests.iq(
            action, id: id, domain: s.settings.domain, render: { tools.render($0, s) }, variable: { tools.variable($0, s) })
        switch request {
        case .stanza(let stanza):
            s.send(stanza)
        case .raw(let text, let expectResult):
            s.count(.stanzasOutOther)
            s.actions.append(.sendRaw(text))
            guard expectResult else {
                awaited = 0
                return .completed(measured: false)
            }
        }
        return .waiting(timeout: timeout)
    }

    mutating func answer(_ stanza: XMLElement, _ s: inout SessionShared) -> StepOutcome? {
        guard let outcome = IQAnswer.outcome(of: stanza, to: awaited, &s) else { return nil }
        awaited = 0
        return outcome
    }

    mutating func forget() { awaited = 0 }
}
