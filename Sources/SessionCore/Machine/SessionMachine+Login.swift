// SessionMachine: Connecting and logging in: the connection and login features' outcomes, resumption.
import LoadProfile
import LoadResults
import XMPPCore

extension SessionMachine {
    // MARK: - Connecting and logging in

    mutating func start() {
        guard connection.stage == .idle else { return }
        login.connecting(intended: sessionStart, &shared)
        connection.connect(resumeLocation: nil, &shared)
    }

    mutating func connected() {
        // A registration's fresh connection goes on with the login in progress; any other `connected`
        // while logging in is not ours.
        guard connection.stage == .connecting || (connection.isLoggingIn && login.awaitsFreshConnection) else { return }
        if login.progress == nil {
            var tools = program.lend(templateValues)
            login.setResource(tools.render(shared.script.login.resource, shared))
            program.takeBack(tools)
        }
        _ = connection.connected()
        loginOutcome(login.connected(resume: streamManagement?.resumeRequest, probe: probe, &shared))
    }

    mutating func loginOutcome(_ outcome: LoginFeature.Outcome?) {
        guard let outcome else { return }
        switch outcome {
        case .loggedIn(let result): loggedIn(result)
        case .resumed(let element): resumed(element)
        case .resumeFailed: resumeFailed()
        case .freshConnection:
            shared.actions.append(.closeStream)
            shared.actions.append(.close)
            connection.connect(resumeLocation: nil, &shared)
        case .failed(let error): end(error)
        }
    }

    mutating func loggedIn(_ result: LoginResult) {
        login.finished(reconnected: reconnect.isReconnecting, node: connection.node(shared), &shared)
        shared.count(reconnect.isReconnecting ? .sessionsReconnected : .sessionsLoggedIn)
        reconnect.loggedIn()
        connection.loggedIn(&shared)
        keepAlive.forget()
        keepAlive.arm(shared.script.keepAlive, now: shared.now)
        streamManagement = StreamManagementFeature.enable(offered: result.offersStreamManagement, inline: result.inlineStreamManagement, &shared)
        streamManagement?.queueFrom(shared.actions.count)
        // A fresh login: nothing of a lost stream's features holds; then each learns this login's offers.
        for made in requests?.made ?? [] { made.feature.forget() }
        if shared.script.usesRequestFeatures {
            let features = requests ?? RequestFeatureSet()
            requests = features
            for index in shared.script.featureCounters.indices where shared.script.usesFeature(index) {
                features.instance(index).loggedIn(result)
            }
        }
        if let probe { for query in probe.queries(domain: shared.settings.domain, now: shared.now) { shared.send(query) } }
        // Nothing of a lost stream's program holds; run from the first step.
        program.begin(shared)
        presence.forget()
        roster.forget()
        query.forget()
        muc.forget()
        runProgram()
    }

    /// The server resumed our stream: resend what it did not handle; every feature goes on where the
    /// drop left it.
    mutating func resumed(_ element: XMLElement) {
        guard let session = streamManagement, let resend = session.resumed(element) else {
            return end(.login(.protocolViolation("<resumed/> without a valid 'h'")))
        }
        login.finished(reconnected: reconnect.isReconnecting, node: connection.node(shared), &shared)
        shared.count(.sessionsResumed)
        reconnect.loggedIn()
        connection.loggedIn(&shared)
        presence.resumed(&shared)
        keepAlive.arm(shared.script.keepAlive, now: shared.now)
        for stanza in resend { shared.send(stanza) }
        if program.resumed(shared) { runProgram() }
    }

    /// The server refused to resume: what it never acknowledged is counted (lost unless delivered
    /// anyway) and the login goes on with a fresh bind (the program starts again after it).
    mutating func resumeFailed() {
        if let session = streamManagement { shared.count(.streamManagementUnacknowledged, by: session.unacknowledgedCount) }
        shared.count(.sessionsResumeFailed)
        streamManagement = nil
    }
}
