/// What one SASL2 `<authenticate/>` asked for, kept while the machine waits for its outcome.
struct SASL2Request: Sendable {
    /// Authenticating with a FAST token (its failure falls back to the password).
    var isFAST = false
    /// Bind2 was asked for.
    var bind = false
    /// XEP-0198 was asked to be enabled inside Bind2.
    var streamManagement = false
    /// Carbons were asked to be enabled inside Bind2.
    var carbons = false
    /// A resumption travelled inside the request.
    var resume = false
    /// The HT mechanism of a token the server may issue in `<success/>`: the one asked for with
    /// `<request-token/>`, or the FAST mechanism in use (rotation); nil when none can come.
    var tokenMechanism: FASTMechanism?

    /// The phase of the wait for `<success/>` once the last SASL message is out: `resume` when a
    /// resumption travels, `bind` when Bind2 does, else the phase goes on (`sasl`).
    var lastMessagePhase: [LoginMachine.Action] {
        if resume { return [.enterPhase(.resume)] }
        if bind { return [.enterPhase(.bind)] }
        return []
    }
}
