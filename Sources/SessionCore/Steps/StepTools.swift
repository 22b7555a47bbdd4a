// What a step feature may use while it starts a step or reads an answer: templates, request ids, draws.
import LoadProfile
import XMPPCore

/// What the program lends a step feature while it starts one of its steps (or reads an answer): the
/// template renderer (`${user}`, `${seq}`, `${room}`, `${random}`…), the next request id (`q<n>`) and
/// the program's seeded generator (`to: random`, `${random}`). Lent for one call and taken back:
/// the generator and the request numbers are the program's state, the values other features'
/// (read-only copies).
struct StepTools {
    /// The program's generator (taken back after the call).
    var generator: SeededGenerator
    /// The program's last request number (taken back after the call).
    var requestCounter: UInt32
    /// The values of the session variables other features keep.
    let values: TemplateValues

    /// The next request id: `q<n>`.
    mutating func nextRequestID() -> String {
        requestCounter &+= 1
        return "q\(requestCounter)"
    }

    /// `template` rendered for this session.
    mutating func render(_ template: Template, _ s: SessionShared) -> String {
        template.render { variable($0, s) }
    }

    /// The value of `${name}` for this session: the session's own variables (`SessionVariable`), else
    /// the profile's `variables:`.
    mutating func variable(_ name: String, _ s: SessionShared) -> String? {
        guard let known = SessionVariable(rawValue: name) else { return s.script.variables[name] }
        return known.value(
            identity: s.identity, settings: s.settings, resource: values.resource, sequence: values.sequence, room: values.room,
            nick: values.nick, variables: s.script.variables, generator: &generator)
    }
}

/// The values of session variables that features other than the program keep: the bound resource
/// (login), the last message's sequence (messaging), the room and nick (MUC).
struct TemplateValues {
    var resource: String
    var sequence: UInt32
    var room: String? = nil
    var nick: String? = nil
}

/// How a step ended, or that it waits: what a step feature answers when the program starts one of its
/// steps, when a stanza answers it, and when its timeout comes.
enum StepOutcome: Equatable {
    /// The step completed; `measured`: it is timed (a fire-and-forget step is not: a message's
    /// latency is its receiver's).
    case completed(measured: Bool)
    /// The step waits for the server, for at most this long (the step's timeout, or less).
    case waiting(timeout: Duration)
    /// The step failed: the session goes on or ends as the step's `on_error` says.
    case failed(SessionError)
}
