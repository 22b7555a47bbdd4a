// The shape of a protocol feature whose steps are requests: what it sends, what answers it, its counters.
import LoadProfile
import LoadResults
import XMPPCore

/// A protocol feature whose steps (`FeatureStep`s, decoded by its rows in `FeatureStepKind.rows`) are
/// requests to the server — message carbons, client state, an archive query, a PEP publish, a
/// blocking-list change. One type per feature, in one file: what each step sends, what answers it
/// (and which error answers mean "the server does not support it"), what it does with the server's
/// pushes, what it learns at login, its counters with their notices, and the XEP-0115 features a
/// profile using it must advertise. A session makes an instance only when its profile uses the
/// feature (`SessionFeatures`), so a session pays nothing for the features its profile does not use.
///
/// Registered in `SessionFeatures.requestFeatures` (one line). Loop-bound like the machine.
protocol RequestFeature: AnyObject, SendableMetatype {
    /// The feature's name, as its rows name it (`FeatureStep.feature`).
    static var name: String { get }
    /// Its counters (names in results files) and what a non-zero count tells a person; registered
    /// once per run, in this order (`RequestContext.counter(_:)`).
    static var counters: [(name: String, notice: CounterNotice?)] { get }
    /// XEP-0115 features a profile with `step` must advertise (PEP's `<node>+notify`). Default: none.
    static func capsFeatures(for step: FeatureStep) -> [String]

    init()

    /// Starts `step`: sends what it sends; returns the step's outcome (waiting for the answer, or
    /// done at once).
    func start(_ step: FeatureStep, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome
    /// What `stanza` does to this feature's step waiting for its answer; nil when it does not answer it.
    func answer(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> StepOutcome?
    /// A stanza the server pushed; true when this feature consumed it (nothing else sees it). Default:
    /// not consumed.
    func push(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> Bool
    /// The login succeeded with these offers. Default: nothing.
    func loggedIn(_ result: LoginResult)
    /// A fresh login follows a lost stream: forget what belonged to it. Default: nothing.
    func forget()
}

extension RequestFeature {
    static func capsFeatures(for step: FeatureStep) -> [String] { [] }
    func push(_ stanza: XMLElement, _ s: inout SessionShared, _ context: inout RequestContext) -> Bool { false }
    func loggedIn(_ result: LoginResult) {}
    func forget() {}
}

/// What a request feature may use besides the shared session while it starts a step or reads an
/// answer: the program's tools (request ids, templates), its registered counters and, for a step,
/// the step's timeout.
struct RequestContext {
    var tools: StepTools
    /// This feature's counter ids, in the order of its `counters`.
    let counters: [CounterID]
    /// The current step's timeout.
    let timeout: Duration

    /// The id of this feature's counter number `index` (in the order of its `counters`).
    func counter(_ index: Int) -> CounterID { counters[index] }

    func count(_ index: Int, by amount: UInt64 = 1, _ s: inout SessionShared) { s.count(counters[index], by: amount) }

    /// Error conditions that mean the server (or the account's service) does not implement a request.
    static let unsupportedConditions: Set<String> = ["feature-not-implemented", "service-unavailable"]

    /// The usual answer to a feature's iq `q<number>`: a result completes the step, timed; an error
    /// meaning "not implemented" completes it unmeasured, counted under the feature's counter
    /// `unsupported`; any other error fails it (`stanza-<condition>`). Nil when `stanza` does not
    /// answer it.
    func iqAnswer(_ stanza: XMLElement, to number: UInt32, unsupported: Int, _ s: inout SessionShared) -> StepOutcome? {
        guard number != 0, stanza.name == "iq", IQAnswer.requestNumber(of: stanza) == number else { return nil }
        let type = stanza.attribute("type")
        guard type == "result" || type == "error" else { return nil }
        if type == "result" { return .completed(measured: true) }
        if Self.unsupportedConditions.contains(Stanza.stanzaCondition(stanza)) {
            count(unsupported, &s)
            return .completed(measured: false)
        }
        let error = SessionError.stanzaError(condition: Stanza.stanzaCondition(stanza))
        s.record(.errorExample(kind: error.kind, text: SessionError.serverText(of: stanza)))
        return .failed(error)
    }
}
