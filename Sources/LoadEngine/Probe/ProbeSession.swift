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
    private(set) var phase = LoginPhase.connect.rawValue
    private var connection: ProbeConnection?
    private var boundJID: String?
    private var presenceSentAt: NIODeadline?
    private var echoAt: NIODeadline?
    private var queryCount = 0

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

    // MARK: - Queries after login

    private mutating func queries(_ report: inout ProbeReport) async throws {
        let domain = options.domain
        let (info, infoOutcome) = try await query(iq("disco-info", to: domain, XMLElement("query", namespace: XMPPNamespace.discoInfo)))
        let parsed = info.map(Self.discoInfo) ?? (identities: [], features: [])
        report.discoInfo = ProbeReport.DiscoInfo(outcome: infoOutcome, identities: parsed.identities, features: parsed.features)

        let itemsNamespace = "http://jabber.org/protocol/disco#items"
        let (items, itemsOutcome) = try await query(iq("disco-items", to: domain, XMLElement("query", namespace: itemsNamespace)))
        let jids =
            items?.firstChild(named: "query", namespace: itemsNamespace)?
            .children(named: "item", namespace: itemsNamespace).compactMap { $0.attribute("jid") } ?? []
        var muc: String?
        for jid in jids.prefix(Self.maxItems) where muc == nil {
            let (answer, _) = try await query(
                iq("item-info", to: jid, XMLElement("query", namespace: XMPPNamespace.discoInfo)), timeout: Self.itemTimeout)
            if let answer, Self.discoInfo(answer).identities.contains(where: { $0.category == "conference" && $0.type == "text" }) {
                muc = jid
            }
        }
        report.discoItems = ProbeReport.DiscoItems(outcome: itemsOutcome, items: jids, mucService: muc)

        let (version, versionOutcome) = try await query(iq("version", to: domain, XMLElement("query", namespace: XMPPNamespace.version)))
        let fields = version?.firstChild(named: "query", namespace: XMPPNamespace.version)
        func text(_ name: String) -> String? {
            fields?.firstChild(named: name, namespace: XMPPNamespace.version).map(\.text).flatMap { $0.isEmpty ? nil : $0 }
        }
        report.software = ProbeReport.Software(outcome: versionOutcome, name: text("name"), version: text("version"), os: text("os"))

        report.ping = try await query(iq("ping", to: domain, XMLElement("ping", namespace: XMPPNamespace.ping))).1

        report.entityTime = try await entityTime()

        presenceSentAt = .now()
        connection!.send(.element(Stanza.presence()))
        try await drain(until: presenceSentAt! + options.presenceWait) { $0.echoAt != nil }
        report.presence = ProbeReport.PresenceEcho(
            echoed: echoAt != nil, latencyMilliseconds: echoAt.map { PhaseTimer.milliseconds(from: presenceSentAt!, to: $0) },
            waitedMilliseconds: Double(options.presenceWait.nanoseconds) / 1e6)

        let closing = NIODeadline.now()
        connection!.send(.close)
        var closedAt: NIODeadline?
        while closedAt == nil, let arrival = try await connection!.next(within: closing + Self.closeWait - .now()) {
            switch arrival.event {
            case .closed: closedAt = arrival.at
            case .failed: break
            default: continue
            }
            if case .failed = arrival.event { break }
        }
        report.streamClose = ProbeReport.StreamClose(
            answered: closedAt != nil, milliseconds: closedAt.map { PhaseTimer.milliseconds(from: closing, to: $0) })
    }

    /// XEP-0202, `SessionMachine.timeQueries` queries one after the other (spaced out for a coarse
    /// server clock); the first one's outcome
    /// and the clock offset estimated from every answer (`ClockOffset.estimate`).
    private mutating func entityTime() async throws -> ProbeReport.EntityTime {
        var samples: [ClockOffset.Sample] = []
        var first: ProbeReport.QueryOutcome?
        for _ in 0..<SessionMachine.timeQueries {
            let wallSent = Int64(Date().timeIntervalSince1970 * 1e9)
            let (answer, outcome) = try await query(iq("time", to: options.domain, XMLElement("time", namespace: "urn:xmpp:time")))
            if first == nil { first = outcome }
            guard outcome.answer == .result, let rtt = outcome.roundTripMilliseconds,
                let utc = answer?.firstChild(named: "time", namespace: "urn:xmpp:time")?.firstChild(named: "utc", namespace: "urn:xmpp:time")?.text,
                let server = ClockOffset.serverTime(utc: utc)
            else { break }
            samples.append(
                ClockOffset.Sample(
                    sent: wallSent, received: wallSent + Int64(rtt * 1e6), server: server.nanoseconds, resolution: server.resolution))
            // A server that answers in whole seconds (Prosody, jabberd2) pins the offset to a second
            // per sample; samples at different phases of its second narrow that down (ClockOffset).
            if server.resolution >= 100_000_000 && samples.count < SessionMachine.timeQueries {
                try await Task.sleep(for: Self.coarseClockSpacing)
            }
        }
        return ProbeReport.EntityTime(outcome: first ?? ProbeReport.QueryOutcome(answer: .timeout), clock: ClockOffset.estimate(samples))
    }

    /// (identities, sorted features) of a disco#info result.
    static func discoInfo(_ iq: XMLElement) -> (identities: [ServerFacts.Identity], features: [String]) {
        guard let query = iq.firstChild(named: "query", namespace: XMPPNamespace.discoInfo) else { return ([], []) }
        let identities = query.children(named: "identity", namespace: XMPPNamespace.discoInfo).compactMap { identity in
            identity.attribute("category").flatMap { category in
                identity.attribute("type").map { ServerFacts.Identity(category: category, type: $0, name: identity.attribute("name")) }
            }
        }
        let features = query.children(named: "feature", namespace: XMPPNamespace.discoInfo).compactMap { $0.attribute("var") }
        return (identities, Array(Set(features)).sorted())
    }

    // MARK: - Conversation

    private mutating func nextID(_ what: String) -> String {
        queryCount += 1
        return "xmppload-probe-\(what)-\(queryCount)"
    }

    private mutating func iq(_ what: String, to: String, _ child: XMLElement) -> XMLElement {
        Stanza.iq(type: "get", id: nextID(what), to: to, child: child)
    }

    /// Sends `request` (an iq with an id) and waits for its result or error, at most `timeout`
    /// (default `Options.replyTimeout`).
    private mutating func query(_ request: XMLElement, timeout: TimeAmount? = nil) async throws -> (XMLElement?, ProbeReport.QueryOutcome) {
        let id = request.attribute("id") ?? ""
        let sent = NIODeadline.now()
        connection!.send(.element(request))
        var answer: (XMLElement, NIODeadline)?
        try await drain(until: sent + (timeout ?? options.replyTimeout)) { _ in
            answer != nil
        } onElement: { element, at in
            guard element.name == "iq", element.attribute("id") == id else { return false }
            let type = element.attribute("type")
            guard type == "result" || type == "error" else { return false }
            answer = (element, at)
            return true
        }
        guard let (reply, at) = answer else { return (nil, ProbeReport.QueryOutcome(answer: .timeout)) }
        let rtt = PhaseTimer.milliseconds(from: sent, to: at)
        if reply.attribute("type") == "result" { return (reply, ProbeReport.QueryOutcome(answer: .result, roundTripMilliseconds: rtt)) }
        let condition = Stanza.errorCondition(of: reply, conditionNamespace: XMPPNamespace.stanzas)
        return (reply, ProbeReport.QueryOutcome(answer: .error, condition: condition, roundTripMilliseconds: rtt))
    }

    /// Reads arrivals until `done` holds or `deadline` passes. Each element goes to `onElement` first
    /// (true: taken); otherwise a stream error ends the probe, our own presence coming back is noted,
    /// and an iq get/set is answered as a session answers it. A closed or failed connection ends the
    /// probe.
    private mutating func drain(
        until deadline: NIODeadline, _ done: (ProbeSession) -> Bool,
        onElement: (XMLElement, NIODeadline) -> Bool = { _, _ in false }
    ) async throws {
        while !done(self) {
            let remaining = deadline - .now()
            guard remaining > .zero, let arrival = try await connection!.next(within: remaining) else { return }
            switch arrival.event {
            case .element(let element):
                if onElement(element, arrival.at) { continue }
                if element.name == "error" && element.namespace == XMPPNamespace.streams {
                    let condition = Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)
                    throw ProbeAbort(phase: phase, kind: "stream-\(condition)", detail: "stream error <\(condition)/>")
                }
                if element.name == "presence", presenceSentAt != nil, echoAt == nil, element.attribute("from") == boundJID,
                    element.attribute("type") == nil
                {
                    echoAt = arrival.at
                } else if let reply = AutoResponder.react(to: element).reply {
                    connection!.send(.element(reply))
                }
            case .closed:
                throw ProbeAbort(phase: phase, kind: "stream-closed", detail: "the server closed the stream")
            case .failed(let kind, let detail):
                throw ProbeAbort(phase: phase, kind: kind, detail: detail)
            case .opened, .tlsEstablished:
                continue
            }
        }
    }
}

/// Times the login's phases as the machine enters them (monotonic clock, ms).
struct PhaseTimer {
    private(set) var phases: [ProbeReport.PhaseTime]
    private var current: (phase: String, since: NIODeadline)?

    init(connectMilliseconds: Double) {
        phases = [ProbeReport.PhaseTime(phase: LoginPhase.connect.rawValue, milliseconds: connectMilliseconds)]
    }

    /// `phase` begins now; the one before it, if any, ends now.
    mutating func enter(_ phase: String) {
        end()
        current = (phase, .now())
    }

    mutating func end() {
        if let current {
            phases.append(ProbeReport.PhaseTime(phase: current.phase, milliseconds: Self.milliseconds(from: current.since, to: .now())))
        }
        current = nil
    }

    static func milliseconds(from start: NIODeadline, to end: NIODeadline) -> Double {
        Double((end - start).nanoseconds) / 1e6
    }
}

/// The probe's channel as seen from the driver's task: every call hops to the channel's loop.
struct ProbeConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<ProbeChannelHandler>

    static func open(host: String, port: Int, tls: ProbeTLS?, timeout: TimeAmount, loop: any EventLoop) async throws -> ProbeConnection {
        let bootstrap = ClientBootstrap(group: loop).connectTimeout(timeout).channelInitializer { channel in
            do {
                try channel.pipeline.syncOperations.addHandlers(ProbeChannelHandler.pipeline(tls: tls).handlers)
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
        let channel = try await bootstrap.connect(host: host, port: port).get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ProbeChannelHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return ProbeConnection(channel: channel, handler: handler)
    }

    func next(within timeout: TimeAmount) async throws -> ProbeArrival? {
        let handler = self.handler
        return try await channel.eventLoop.flatSubmit { handler.value.next(within: timeout) }.get()
    }

    func send(_ output: XMPPStreamOutput) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.send(output) }
    }

    /// Resets the framer and sends a new stream header, in one step on the loop.
    func restartStream(domain: String) {
        let handler = self.handler
        channel.eventLoop.execute {
            handler.value.restartStream()
            handler.value.send(.header(domain: domain))
        }
    }

    func startTLS() async throws {
        let handler = self.handler
        try await channel.eventLoop.submit { try handler.value.startTLS() }.get()
    }

    func close() async {
        try? await channel.close()
    }
}
