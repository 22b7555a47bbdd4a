// The roster as a session feature: its steps and the answer each waits for.
import LoadProfile
import LoadResults
import XMPPCore

/// The roster steps (`roster: get|add|rename|remove`): each sends its query or push as an iq and
/// waits for the result (an error fails it: `stanza-<condition>`). The only state is the id of the
/// request in flight.
struct RosterFeature {
    /// The number of the request in flight (`q<n>`; 0: none).
    private var awaited: UInt32 = 0

    mutating func start(_ action: RosterAction, timeout: Duration, tools: inout StepTools, _ s: inout SessionShared) -> StepOutcome {
        let id = tools.nextRequestID()
        awaited = tools.requestCounter
        s.send(StepRequests.roster(action, id: id) { tools.render($0, s) })
        return .waiting(timeout: timeout)
    }

    mutating func answer(_ stanza: XMLElement, _ s: inout SessionShared) -> StepOutcome? {
        guard let outcome = IQAnswer.outcome(of: stanza, to: awaited, &s) else { return nil }
        awaited = 0
        return outcome
    }

    mutating func forget() { awaited = 0 }
}

/// The answer to an iq request: a result completes the step, timed; an error fails it
/// (`stanza-<condition>`), its `<text/>` kept as the kind's example.
enum IQAnswer {
    /// The outcome when `stanza` answers our request number `number` (`q<number>`; 0: none); nil when
    /// it does not.
    static func outcome(of stanza: XMLElement, to number: UInt32, _ s: inout SessionShared) -> StepOutcome? {
        guard number != 0, stanza.name == "iq", requestNumber(of: stanza) == number else { return nil }
        let type = stanza.attribute("type")
        guard type == "result" || type == "error" else { return nil }
        if stanza.attribute("type") == "result" { return .completed(measured: true) }
        let error = SessionError.stanzaError(condition: Stanza.stanzaCondition(stanza))
        s.record(.errorExample(kind: error.kind, text: SessionError.serverText(of: stanza)))
        return .failed(error)
    }

    /// The number n of a stanza whose id is `q<n>` (our request ids), else nil.
    static func requestNumber(of stanza: XMLElement) -> UInt32? {
        guard let id = stanza.attribute("id"), id.utf8.first == UInt8(ascii: "q"), id.utf8.count > 1, id.utf8.count <= 11 else { return nil }
        var value: UInt64 = 0
        for byte in id.utf8.dropFirst() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        return value <= UInt64(UInt32.max) ? UInt32(value) : nil
    }
}
