// The login as a session feature: drives a LoginMachine, times it, and says how it ended.
import LoadProfile
import LoadResults
import XMPPCore

/// The login of a session, on each connection: it starts a `LoginMachine` (XMPPCore) when the
/// connection is up, performs what the login machine asks for on the wire, times every phase
/// (`LoginProgress`, boxed while logging in), owns the login timeout, and says how the login ended
/// (`Outcome`) — the machine then runs the program, resumes it, or ends the session. It also keeps
/// what the login produced that the rest of the session reads: the bound JID and the resource.
///
/// Timing: a login's corrected latency counts from when it was due (the arrival's intended start, or
/// a reconnect's back-off end), its service latency from the connect; phases are summed per phase
/// and recorded once the login succeeded (or, when it failed, those it completed), and the login
/// again under the path it took (`LoginPathMetrics`: classic, sasl2, sasl2-bind2, fast, resumed).
///
/// The modern login (issue 40): the login machine uses SASL2 where the profile's mode allows it
/// and the server offers it, with the session's user-agent id (`UserAgentID`, derived, never
/// stored), Bind2 with inline stream management when the profile asks for it (the grant goes to
/// `StreamManagementFeature` through `LoginResult`), carbons when the profile enables them, and
/// the stream's resumption inline. FAST: the first password login asks for a token; the token lives
/// in a box (`FASTTokenHolder`) made when a server issued one, is used by the next connections,
/// replaced when the server rotates it and dropped (counted) when the server refuses it.
struct LoginFeature {
    /// The login in progress (nil when not logging in).
    private(set) var progress: LoginProgress?
    /// The full JID the server bound (nil while not logged in).
    private(set) var boundJID: String?
    /// The resource asked for at bind (rendered once per session, at its first connect).
    private(set) var resource = ""
    /// When the current login was due and when its connect began.
    private var loginIntended: SessionInstant
    private var connectStart: SessionInstant
    /// The FAST token for the next connections (nil until a server issued one).
    private var fast: FASTTokenHolder?
    /// A login is timed: from the connect until logged in (its timeout runs).
    private var timing = false
    /// The account was registered on a stream now closed; the next connection authenticates.
    private(set) var awaitsFreshConnection = false

    init(intendedStart: SessionInstant) {
        loginIntended = intendedStart
        connectStart = intendedStart
    }

    /// How a login ended.
    enum Outcome: Equatable {
        /// Logged in on a fresh stream as `jid`; what the features after authentication offered.
        case loggedIn(LoginResult)
        /// The server resumed our stream (XEP-0198 `<resumed/>`, given).
        case resumed(XMLElement)
        /// The server refused to resume; a fresh bind follows on the same stream.
        case resumeFailed
        /// The account was registered; connect again and authenticate on a fresh stream.
        case freshConnection
        /// The login failed.
        case failed(SessionError)
    }

    /// A connect began (the first, or a reconnect's): the login is due from `intended` and times out
    /// after the script's login timeout.
    mutating func connecting(intended: SessionInstant, _ s: inout SessionShared) {
        loginIntended = intended
        connectStart = s.now
        timing = true
    }

    /// When the login times out: the script's login timeout after the connect began (nil when no
    /// login is timed).
    func deadline(_ s: SessionShared) -> SessionInstant? { timing ? connectStart + s.script.loginTimeout : nil }

    /// The resource for this session's binds; rendered by the caller once, before the first connect.
    mutating func setResource(_ rendered: String) { resource = rendered }

    /// The connection is up: start the login machine (or, after a registration, the authenticating
    /// one on this fresh stream). `resume`: the `<resume/>` of a resuming connection.
    mutating func connected(resume: XMLElement?, probe: ServerFactsProbe?, _ s: inout SessionShared) -> Outcome? {
        if let progress, awaitsFreshConnection {
            // The account was registered on the previous stream: authenticate on this one.
            awaitsFreshConnection = false
            progress.machine = LoginMachine(configuration: configuration(register: false, resume: resume, s), keyCache: s.host.keyCache)
            return perform(progress.machine.start(), probe: probe, &s)
        }
        let machine = LoginMachine(configuration: configuration(register: s.script.login.register, resume: resume, s), keyCache: s.host.keyCache)
        let started = LoginProgress(machine: machine, now: s.now)
        started.record(.connect, nanos: s.now.nanoseconds(since: connectStart))
        progress = started
        return perform(started.machine.start(), probe: probe, &s)
    }

    private func configuration(register: Bool, resume: XMLElement?, _ s: SessionShared) -> LoginMachine.Configuration {
        let login = s.script.login
        var configuration = LoginMachine.Configuration(
            domain: s.settings.domain, username: s.identity.username, password: s.settings.password, resource: resource,
            tls: login.tls, mechanism: login.mechanism, register: register)
        configuration.deriveKeysElsewhere = true
        configuration.resume = resume
        configuration.maxSCRAMIterations = s.settings.maxSCRAMIterations
        configuration.mode = login.mode
        guard login.mode != .classic else { return configuration }
        configuration.userAgentID = UserAgentID.derive(seed: s.settings.seed, serial: s.identity.serial)
        if let sm = s.script.streamManagement {
            configuration.inlineStreamManagement = true
            configuration.inlineStreamManagementResume = sm.resume
        }
        configuration.enableCarbons = login.carbons
        configuration.requestFASTToken = login.fast
        configuration.fastToken = login.fast ? fast?.token : nil
        return configuration
    }

    /// Hands a login event to the login machine (`event` is called only while logging in).
    mutating func handle(
        probe: ServerFactsProbe?, _ s: inout SessionShared, _ event: (inout LoginMachine) -> [LoginMachine.Action]
    ) -> Outcome? {
        guard let progress else { return nil }
        return perform(event(&progress.machine), probe: probe, &s)
    }

    /// Performs what the login machine asked for; returns how the login ended, if it did.
    private mutating func perform(_ actions: [LoginMachine.Action], probe: ServerFactsProbe?, _ s: inout SessionShared) -> Outcome? {
        guard let progress else { return nil }
        // A refused resumption goes on with the bind the same actions ask for; it is said after them.
        var resumeRefused = false
        for action in actions {
            switch action {
            case .openStream: s.actions.append(.openStream)
            case .restartStream: s.actions.append(.restartStream)
            case .send(let element): s.send(element)
            case .startTLS:
                guard s.settings.tlsAvailable else { return .failed(.tlsUnavailable) }
                s.actions.append(.startTLS)
            case .enterPhase(let next): progress.enter(next, now: s.now)
            case .unexpected(_, let reply):
                s.count(.unexpectedStanzas)
                if let reply { s.send(reply) }
            case .registered(let created): s.count(created ? .accountsCreated : .accountsExisted)
            case .authenticateOnFreshStream:
                // The caller closes this connection and connects again; `connected` starts the
                // authenticating login on the next one (the login timeout keeps running: it covers both).
                progress.enter(.connect, now: s.now)
                awaitsFreshConnection = true
                return .freshConnection
            case .loggedIn(let jid):
                let outcome = progress.machine.outcome
                if let outcome { takeToken(outcome, &s) }
                if let probe {
                    s.actions.append(
                        .learned(
                            ServerFacts(
                                streamFeatures: probe.offeredFeatures,
                                saslMechanism: outcome?.mechanism ?? progress.machine.chosenMechanism?.name,
                                saslChannelBinding: outcome?.channelBinding?.name, loginPath: outcome?.path.rawValue)))
                }
                boundJID = jid
                return .loggedIn(
                    LoginResult(
                        jid: jid, offersStreamManagement: progress.machine.offersStreamManagement,
                        offersClientState: progress.machine.offersClientState, inlineStreamManagement: outcome?.streamManagement,
                        carbonsEnabled: outcome?.carbonsEnabled ?? false))
            case .resumed(let element):
                if let outcome = progress.machine.outcome { takeToken(outcome, &s) }
                return .resumed(element)
            case .resumeFailed:
                boundJID = nil
                resumeRefused = true
            case .fail(let error):
                if progress.machine.fastTokenRejected != nil { refuseToken(&s) }
                return .failed(.login(error))
            case .deriveKey(let request):
                // PBKDF2 (up to the iteration cap) runs on a worker thread, never on the event loop.
                s.actions.append(.deriveKey(request))
            }
        }
        return resumeRefused ? .resumeFailed : nil
    }

    /// What the server said about FAST in a login that ended well: a new or rotated token replaces
    /// the one held; a refused one (the login fell back to the password) is dropped and counted.
    private mutating func takeToken(_ outcome: LoginOutcome, _ s: inout SessionShared) {
        if outcome.fastTokenRejected != nil { refuseToken(&s) }
        guard let token = outcome.newFASTToken else { return }
        s.count(s.settings.metrics.loginPaths.fastTokensIssued)
        if let fast { fast.token = token } else { fast = FASTTokenHolder(token: token) }
    }

    /// The server refused the FAST token: drop it, count the fallback to the password.
    private mutating func refuseToken(_ s: inout SessionShared) {
        guard fast != nil else { return }
        fast = nil
        s.count(s.settings.metrics.loginPaths.fastTokenFallbacks)
    }

    /// Whether the session holds a FAST token for its next connection.
    var holdsFASTToken: Bool { fast != nil }

    /// The login succeeded (`reconnected`: it was a reconnect's): records its phases, `login` (also for
    /// `node`), `reconnect.login` and the login under its path; the login box goes and the timeout with it.
    mutating func finished(reconnected: Bool, node: ServerNode?, _ s: inout SessionShared) {
        if let progress {
            progress.enter(nil, now: s.now)
            progress.appendPhases(s.settings.metrics, node: node, to: &s.actions)
            if let outcome = progress.machine.outcome {
                s.settings.metrics.loginPaths.record(outcome, reconnected: reconnected, intended: loginIntended, connectStart: connectStart, &s)
            }
        }
        s.recordLatency(s.settings.metrics.login, from: loginIntended, serviceFrom: connectStart, node: node)
        if reconnected { s.recordLatency(s.settings.metrics.reconnectLogin, from: loginIntended, serviceFrom: connectStart) }
        progress = nil
        timing = false
    }

    /// The login phase the session is in while logging in (`connect` before its first phase began).
    var phase: LoginPhase? { progress.map { $0.currentPhase ?? .connect } }

    /// A login failed with `error` in `phase`: counts it under its phase and kind (`login_failures`)
    /// and records the phases the login did complete into `login.<phase>` (not the one it failed in,
    /// nor `login`).
    mutating func failed(_ error: SessionError, in phase: LoginPhase, node: ServerNode?, _ s: inout SessionShared) {
        s.record(.loginFailure(phase: phase.rawValue, kind: error.kind))
        progress?.appendPhases(s.settings.metrics, node: node, to: &s.actions)
    }

    /// The connection dropped and the session waits to reconnect or resume: no login is in progress;
    /// the bound JID stays (a resumed stream keeps it).
    mutating func dropConnection() {
        progress = nil
        timing = false
        awaitsFreshConnection = false
    }

    /// The stream is lost for good (a reconnect logs in afresh, or the end): no login is in progress,
    /// no JID is bound.
    mutating func forget() {
        progress = nil
        timing = false
        boundJID = nil
        awaitsFreshConnection = false
    }

    /// The login timed out: the error names the phase it was stuck in.
    mutating func timedOut() -> SessionError {
        timing = false
        return .loginTimeout(phase: progress.map { $0.currentPhase } ?? .connect)
    }
}

/// What a login that bound a resource tells the rest of the session.
struct LoginResult: Equatable {
    var jid: String
    /// The features after authentication offered XEP-0198 stream management.
    var offersStreamManagement: Bool
    /// The features after authentication offered XEP-0352 client state indication.
    var offersClientState: Bool
    /// Bind2's answer to the XEP-0198 `<enable/>` it carried (nil: none was carried; then a classic
    /// `<enable/>` follows where offered).
    var inlineStreamManagement: InlineStreamManagement? = nil
    /// Message carbons were enabled inline with Bind2.
    var carbonsEnabled = false
}
