// The probe's conversation driver: connecting, then the login performed step by step and timed.

import Foundation
import LoadEngine
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

/// The probe's one connection, driven as a sequential conversation: the login by the run's own
/// `LoginMachine` (its actions performed one by one, its phases timed), then one query after the
/// other, each answer awaited with a bound. Stanzas nobody asked for are answered as a session
/// answers them (`AutoResponder`) and otherwise ignored, except our own presence coming back.
struct ProbeSession {
    let options: ServerProbe.Options
    let username: String?
    /// The phase the probe is in, for a failure: a `LoginPhase` raw value, then `queries`.
    var phase = LoginPhase.connect.rawValue
    var connection: ProbeConnection?
    var boundJID: String?
    var presenceSentAt: NIODeadline?
    var echoAt: NIODeadline?
    var queryCount = 0
    /// The probe's XEP-0388 user agent: one per probe run (the FAST re-login presents it again).
    let userAgentID = UUID().uuidString.lowercased()
    /// The login's outcome, once logged in.
    var outcome: LoginOutcome?

    /// Each login phase waits this long at most for the server's next step.
    static let phaseTimeout = TimeAmount.seconds(10)
    /// Disco#info of each disco#items entry waits this long at most (there may be many).
    static let itemTimeout = TimeAmount.seconds(3)
    /// Items whose disco#info is asked, at most.
    static let maxItems = 20
    /// Between entity-time queries to a server whose clock answers in whole seconds: five samples
    /// 210 ms apart fall at different phases of its second (about 0.8 s more for the probe).
    static let coarseClockSpacing = Duration.milliseconds(210)
    /// Our `</stream:stream>` is answered within this long, or not at all.
    static let closeWait = TimeAmount.seconds(2)

    init(options: ServerProbe.Options, username: String?) {
        self.options = options
        self.username = username
    }

    mutating func run(into report: inout ProbeReport, group: any EventLoopGroup) async throws {
        let tls: ProbeTLS?
        do { tls = options.tls == .none ? nil : try ProbeTLS(domain: options.domain, insecure: options.insecure) } catch {
            throw ProbeAbort(phase: "tls", kind: "tls", detail: "TLS could not be set up: \(error)")
        }
        let started = NIODeadline.now()
        do {
            connection = try await ProbeConnection.open(
                host: options.host, port: options.port, tls: tls, timeout: options.connectTimeout, loop: group.next())
        } catch {
            let failure = ConnectionFailure(error)
            throw ProbeAbort(phase: "connect", kind: failure.kind, detail: "could not connect to \(options.host):\(options.port) (\(failure.kind))")
        }
        try await run(into: &report, over: connection!, connectMilliseconds: PhaseTimer.milliseconds(from: started, to: .now()))
        if let token = outcome?.newFASTToken {
            await fastRelogin(with: token, tls: tls, group: group, into: &report)
        }
    }

    /// A second connection that logs in with the FAST token the first login got: whether the server
    /// takes it, the path and round trips (`modern_login.fast_login`). Its failure is reported there,
    /// not as the probe's.
    private mutating func fastRelogin(with token: FASTToken, tls: ProbeTLS?, group: any EventLoopGroup, into report: inout ProbeReport) async {
        await connection?.close()
        boundJID = nil
        let started = NIODeadline.now()
        var result = ProbeReport.ModernLogin.FASTLogin(login: nil, failure: nil)
        do {
            connection = try await ProbeConnection.open(
                host: options.host, port: options.port, tls: tls, timeout: options.connectTimeout, loop: group.next())
            var scratch = report
            if let outcome = try await login(
                &scratch, connectMilliseconds: PhaseTimer.milliseconds(from: started, to: .now()), fastToken: token)
            {
                result.login = ProbeReport.ModernLogin.Login(outcome, milliseconds: PhaseTimer.milliseconds(from: started, to: .now()))
            }
        } catch let abort as ProbeAbort {
            result.failure = "\(abort.kind) at \(abort.phase): \(abort.detail)"
        } catch {
            result.failure = "\(ConnectionFailure(error).kind)"
        }
        report.modernLogin?.fastLogin = result
    }

    /// The conversation over an open connection.
    mutating func run(into report: inout ProbeReport, over connection: ProbeConnection, connectMilliseconds: Double) async throws {
        self.connection = connection
        try await login(&report, connectMilliseconds: connectMilliseconds, fastToken: options.fastToken)
        guard boundJID != nil else { return }
        phase = "queries"
        try await queries(&report)
    }

    func close() async {
        await connection?.close()
    }

    // MARK: - Login

    /// Logs in (the run's `LoginMachine`, in `options.login` mode, asking for a FAST token), noting
    /// what the stream offers into `report` on the way; with `fastToken`, a re-login with it that
    /// notes only how the login went (no features, no registration form).
    @discardableResult
    private mutating func login(
        _ report: inout ProbeReport, connectMilliseconds: Double, fastToken: FASTToken? = nil
    ) async throws
        -> LoginOutcome?
    {
        var configuration = LoginMachine.Configuration(
            domain: options.domain, username: username ?? "probe", password: options.password ?? "",
            resource: "xmppload-probe-\(UInt32.random(in: 0...UInt32.max))", tls: options.tls, mechanism: options.mechanism,
            mode: options.login, userAgentID: userAgentID, fastToken: fastToken, requestFASTToken: fastToken == nil)
        configuration.bind2Tag = "xmppload-probe"
        let relogin = fastToken != nil
        let started = NIODeadline.now()
        var machine = LoginMachine(configuration: configuration, keyCache: nil)
        var timer = PhaseTimer(connectMilliseconds: connectMilliseconds)
        var tlsDone = false
        var saslDone = false
        var channelBinding = ChannelBindingData.none
        var actions = machine.start()
        while true {
            for action in actions {
                switch action {
                case .openStream:
                    connection!.send(Self.header(domain: options.domain, from: machine.streamHeaderFrom))
                case .restartStream:
                    connection!.restartStream(header: Self.header(domain: options.domain, from: machine.streamHeaderFrom))
                case .send(let element):
                    connection!.send(.element(element))
                case .startTLS:
                    do { try await connection!.startTLS() } catch {
                        throw ProbeAbort(phase: phase, kind: "tls-unavailable", detail: "TLS could not be added: \(error)")
                    }
                case .enterPhase(let next):
                    timer.enter(next.rawValue)
                    phase = next.rawValue
                    if next == .bind { saslDone = true }
                case .unexpected(_, let reply):
                    if let reply { connection!.send(.element(reply)) }
                case .loggedIn(let jid):
                    timer.end()
                    boundJID = jid
                    outcome = machine.outcome
                    guard let outcome else { return nil }
                    report.login = ProbeReport.Login(jid: jid, phases: timer.phases)
                    if report.modernLogin == nil {
                        report.modernLogin = ProbeReport.ModernLogin(
                            channelBindingTypes: nil, channelBindingAvailable: channelBinding.available.map(\.name), plusUsable: [])
                    }
                    report.sasl?.used = outcome.mechanism
                    report.modernLogin?.login = ProbeReport.ModernLogin.Login(
                        outcome, milliseconds: PhaseTimer.milliseconds(from: started, to: .now()) + connectMilliseconds)
                    report.modernLogin?.downgradeProtection = outcome.downgradeProtection.map(\.rawValue)
                    return outcome
                case .fail(let error):
                    throw ProbeAbort(phase: phase, kind: error.kind, detail: error.description)
                case .registered, .authenticateOnFreshStream, .resumed, .resumeFailed, .deriveKey:
                    break  // not asked for: no registration, no resumption, keys derived in place
                }
            }
            guard let arrival = try await connection!.next(within: Self.phaseTimeout) else {
                throw ProbeAbort(
                    phase: phase, kind: "timeout-login",
                    detail: "stuck at \(phase): no answer from the server within \(Self.phaseTimeout.nanoseconds / 1_000_000_000) s")
            }
            switch arrival.event {
            case .opened:
                actions = []
            case .element(let element):
                if !relogin, element.name == "features" && element.namespace == XMPPNamespace.streams {
                    let stage: ProbeReport.FeatureStage.Stage = saslDone ? .afterSASL : tlsDone ? .afterTLS : .initial
                    report.streamFeatures.append(
                        ProbeReport.FeatureStage(
                            stage: stage,
                            features: element.elementChildren.map { ServerFacts.StreamFeature(name: $0.name, namespace: $0.namespace) }))
                    if stage == .afterSASL {
                        report.streamManagement = element.elementChildren.filter(Self.isStreamManagement).map(\.namespace)
                    } else if tlsDone || options.tls == .none {
                        // The features SASL would start from: what is offered, and the registration form.
                        try await noteOffer(element, channelBinding: channelBinding, in: &report)
                        if username == nil {
                            timer.end()
                            return nil
                        }
                    }
                }
                actions = machine.received(element)
            case .closed:
                actions = machine.streamClosed()
            case .tlsEstablished(let facts, let data):
                if !relogin { report.tls = facts }
                tlsDone = true
                channelBinding = data
                actions = machine.tlsEstablished(channelBinding: data)
            case .failed(let kind, let detail):
                throw ProbeAbort(phase: phase, kind: kind, detail: detail)
            }
        }
    }

    /// The modern-login facts of the features SASL starts from, on a connection with `channelBinding`.
    static func modernLogin(_ offer: AuthenticationOffer, channelBinding: ChannelBindingData) -> ProbeReport.ModernLogin {
        let available = channelBinding.available
        let common = available.contains { (offer.channelBindingTypes ?? []).contains($0.name) }
        let plus = (offer.mechanisms + (offer.sasl2?.mechanisms ?? [])).filter {
            SASLMechanism(name: $0.trimmingCharacters(in: .whitespaces))?.usesChannelBinding == true
        }
        var seen = Set<String>()
        return ProbeReport.ModernLogin(
            channelBindingTypes: offer.channelBindingTypes, channelBindingAvailable: available.map(\.name),
            plusUsable: common ? plus.filter { seen.insert($0).inserted } : [], sasl2: offer.sasl2.map(ProbeReport.ModernLogin.SASL2.init))
    }

    /// Our stream header, with `from` when the login machine wants one (SASL2), as raw text: the
    /// codec's `.header` has no `from` (the session's wiring is the lead's).
    static func header(domain: String, from: String?) -> XMPPStreamOutput {
        guard from != nil else { return .header(domain: domain) }
        return .raw(String(decoding: Stanza.streamHeader(to: domain, from: from), as: UTF8.self))
    }

    /// A stream feature announcing XEP-0198 in any of its namespaces: `<sm xmlns='urn:xmpp:sm:3'/>`,
    /// `urn:xmpp:sm:2`, or jabberd2's pre-standard `<ack xmlns='http://www.xmpp.org/extensions/xep-0198.html#ns'/>`.
    static func isStreamManagement(_ feature: XMLElement) -> Bool {
        feature.namespace.hasPrefix("urn:xmpp:sm:") || feature.namespace.contains("xep-0198")
    }

    /// SASL mechanisms and in-band registration offered in `features`; the registration form asked
    /// when registration is offered.
    private mutating func noteOffer(_ features: XMLElement, channelBinding: ChannelBindingData, in report: inout ProbeReport) async throws {
        let offer = AuthenticationOffer(features: features)
        let offered = offer.mechanisms
        let modern = Self.modernLogin(offer, channelBinding: channelBinding)
        let plusUsable = !modern.plusUsable.isEmpty
        report.modernLogin = modern
        report.sasl = ProbeReport.SASLFacts(
            offered: offered, supported: offered.filter { SASLMechanism.isSupported($0, channelBinding: plusUsable) },
            unsupported: offered.filter { !SASLMechanism.isSupported($0, channelBinding: plusUsable) })
        var registration = ProbeReport.Registration(
            offered: features.firstChild(named: "register", namespace: XMPPNamespace.registerFeature) != nil)
        if registration.offered {
            let (reply, outcome) = try await query(
                Stanza.iq(type: "get", id: nextID("register"), child: XMLElement("query", namespace: XMPPNamespace.register)))
            registration.form = outcome
            if let query = reply?.firstChild(named: "query", namespace: XMPPNamespace.register), outcome.answer == .result {
                (registration.fields, registration.instructions) = Self.registrationForm(query)
            }
        }
        report.registration = registration
    }

    /// The fields a `jabber:iq:register` form asks for: a data form's fields (XEP-0004, not hidden or
    /// fixed) when there is one, else the legacy child elements; and its instructions.
    static func registrationForm(_ query: XMLElement) -> (fields: [String], instructions: String?) {
        let instructions = query.firstChild(named: "instructions", namespace: XMPPNamespace.register)?.text
        if let form = query.firstChild(named: "x", namespace: XMPPNamespace.dataForms) {
            let fields = form.children(named: "field", namespace: XMPPNamespace.dataForms)
                .filter { !["hidden", "fixed"].contains($0.attribute("type") ?? "") }
                .compactMap { $0.attribute("var") }
            let text = form.firstChild(named: "instructions", namespace: XMPPNamespace.dataForms)?.text
            return (fields, instructions ?? text)
        }
        let fields = query.elementChildren.filter { $0.namespace == XMPPNamespace.register && $0.name != "instructions" }.map(\.name)
        return (fields, instructions)
    }
}
