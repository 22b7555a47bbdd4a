// The probe's conversation driver: connecting, then the login performed step by step and timed.

import Foundation
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
    }

    /// The conversation over an open connection.
    mutating func run(into report: inout ProbeReport, over connection: ProbeConnection, connectMilliseconds: Double) async throws {
        self.connection = connection
        try await login(&report, connectMilliseconds: connectMilliseconds)
        guard boundJID != nil else { return }
        phase = "queries"
        try await queries(&report)
    }

    func close() async {
        await connection?.close()
    }

    // MARK: - Login

    private mutating func login(_ report: inout ProbeReport, connectMilliseconds: Double) async throws {
        let configuration = LoginMachine.Configuration(
            domain: options.domain, username: username ?? "probe", password: options.password ?? "",
            resource: "xmppload-probe-\(UInt32.random(in: 0...UInt32.max))", tls: options.tls, mechanism: options.mechanism)
        var machine = LoginMachine(configuration: configuration, keyCache: nil)
        var timer = PhaseTimer(connectMilliseconds: connectMilliseconds)
        var tlsDone = false
        var saslDone = false
        var actions = machine.start()
        while true {
            for action in actions {
                switch action {
                case .openStream:
                    connection!.send(.header(domain: options.domain))
                case .restartStream:
                    connection!.restartStream(domain: options.domain)
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
                    report.login = ProbeReport.Login(jid: jid, phases: timer.phases)
                    report.sasl?.used = machine.chosenMechanism?.name
                    return
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
                if element.name == "features" && element.namespace == XMPPNamespace.streams {
                    let stage: ProbeReport.FeatureStage.Stage = saslDone ? .afterSASL : tlsDone ? .afterTLS : .initial
                    report.streamFeatures.append(
                        ProbeReport.FeatureStage(
                            stage: stage,
                            features: element.elementChildren.map { ServerFacts.StreamFeature(name: $0.name, namespace: $0.namespace) }))
                    if stage == .afterSASL {
                        report.streamManagement = element.elementChildren.filter(Self.isStreamManagement).map(\.namespace)
                    } else if tlsDone || options.tls == .none {
                        // The features SASL would start from: what is offered, and the registration form.
                        try await noteOffer(element, in: &report)
                        if username == nil {
                            timer.end()
                            return
                        }
                    }
                }
                actions = machine.received(element)
            case .closed:
                actions = machine.streamClosed()
            case .tlsEstablished(let facts):
                report.tls = facts
                tlsDone = true
                actions = machine.tlsEstablished()
            case .failed(let kind, let detail):
                throw ProbeAbort(phase: phase, kind: kind, detail: detail)
            }
        }
    }

    /// A stream feature announcing XEP-0198 in any of its namespaces: `<sm xmlns='urn:xmpp:sm:3'/>`,
    /// `urn:xmpp:sm:2`, or jabberd2's pre-standard `<ack xmlns='http://www.xmpp.org/extensions/xep-0198.html#ns'/>`.
    static func isStreamManagement(_ feature: XMLElement) -> Bool {
        feature.namespace.hasPrefix("urn:xmpp:sm:") || feature.namespace.contains("xep-0198")
    }

    /// SASL mechanisms and in-band registration offered in `features`; the registration form asked
    /// when registration is offered.
    private mutating func noteOffer(_ features: XMLElement, in report: inout ProbeReport) async throws {
        let offered =
            features.firstChild(named: "mechanisms", namespace: XMPPNamespace.sasl)?
            .children(named: "mechanism", namespace: XMPPNamespace.sasl).map(\.text) ?? []
        report.sasl = ProbeReport.SASLFacts(
            offered: offered, supported: offered.filter(SASLMechanism.isSupported),
            unsupported: offered.filter { !SASLMechanism.isSupported($0) })
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
