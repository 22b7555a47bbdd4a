// The login as a state machine: its state, the stream features, bind and session; SASL is beside it.

import Foundation

/// The client side of XMPP stream negotiation as a value-type state machine:
/// stream header → features → [STARTTLS → restart] → SASL → restart → resource bind → [session] →
/// logged in (the classic login); or, where the server offers SASL2 (XEP-0388) and `mode` allows it:
/// stream header → features → [STARTTLS → restart] → `<authenticate/>` (SCRAM with or without `-PLUS`,
/// PLAIN, or a FAST token) carrying Bind2, inline stream management, carbons and resumption →
/// `<success/>` → features → logged in (or resumed); or, to register: stream header → features →
/// [STARTTLS → restart] → in-band registration → `.authenticateOnFreshStream` (the handler connects
/// again and runs a machine without `register`).
///
/// Channel binding: the caller hands the connection's channel-binding data in with
/// `tlsEstablished(channelBinding:)`; the mechanism and binding follow XEP-0440's rules
/// (`MechanismChoice`), and SCRAM checks XEP-0474's downgrade-protection hash. How the login went
/// (path, round trips, mechanism, Bind2's grants, a new or rejected FAST token) is `outcome`, set
/// when the machine reports `.loggedIn` or `.resumed`.
///
/// Phases with SASL2: `sasl` from `<authenticate/>` to the last SASL message we send; when that
/// message asks for Bind2 (or resumption), the wait for its `<success/>` — which carries the bind —
/// and the features after it is `bind` (`resume`), so a Bind2 answer that never comes times out
/// there. A FAST login sends one message: its `sasl` phase is empty.
///
/// The machine decides; the channel handler acts. Every mutating method takes what happened and
/// returns the actions to perform, in order. It owns no I/O, no clock and no event loop, so it is
/// tested with plain values.
///
/// Invariants:
/// - A stanza the machine did not expect never fails the login: it is reported as `.unexpected`
///   (with the reply to send for an iq get/set, per `AutoResponder`) and the machine keeps waiting.
/// - Only `<stream:error>`, `</stream:stream>`, a SASL `<failure>`, an error answering one of our own
///   requests, or server data that breaks the protocol ends the login, with a typed `LoginError`.
/// - After `.loggedIn` or `.fail` the machine ignores further input.
/// - Not `Sendable`: it holds the event loop's `SCRAMKeyCache` and lives on that loop with its handler.
public struct LoginMachine {
    /// How TLS is used on this connection (the shared `TLSMode`).
    public typealias TLSPolicy = TLSMode

    /// One thing for the handler to do.
    public enum Action: Sendable, Equatable {
        /// Write the stream header (`Stanza.streamHeader(to:)`).
        case openStream
        /// Reset the stream framer, then write a new stream header (after TLS and after SASL success).
        case restartStream
        /// Write this element.
        case send(XMLElement)
        /// Insert TLS at the bottom of the pipeline now and call `tlsEstablished()` when the handshake ends.
        case startTLS
        /// A new login phase begins now (the previous one, if any, ends now).
        case enterPhase(LoginPhase)
        /// The server pushed something we did not wait for: count it, send `reply` if there is one.
        case unexpected(XMLElement, reply: XMLElement?)
        /// In-band registration ended: `created` is false when the account existed (`conflict`).
        case registered(created: Bool)
        /// Registration is over and this machine is finished: close this stream and connection, connect
        /// again and log in on a fresh stream with a machine that does not register.
        ///
        /// XEP-0077 allows authenticating on the stream that registered, but jabberd2 2.7 then answers
        /// no resource bind at all (its sm learns of the user only for new streams), so every such login
        /// stalls at bind. A fresh stream works on every server (Prosody, ejabberd, jabberd2); it costs
        /// one more connect and TLS handshake per registration, which only provisioning pays.
        case authenticateOnFreshStream
        /// Login finished; the bound full JID (`outcome` says how).
        case loggedIn(jid: String)
        /// The stream was resumed (XEP-0198 `<resumed/>`, given — after SASL, or inside SASL2's
        /// `<success/>`): the login is over, nothing was bound (`outcome` says how).
        case resumed(XMLElement)
        /// The server refused to resume (`<failed/>`, given); a fresh bind follows at once.
        case resumeFailed(XMLElement)
        /// Login failed; close the connection.
        case fail(LoginError)
        /// Derive SCRAM keys for this request off the event loop (`SCRAMKeyRequest.derive()`), then
        /// call `keyDerived(_:)` on the loop. Only with `Configuration.deriveKeysElsewhere`.
        case deriveKey(SCRAMKeyRequest)
    }

    enum Stage: Sendable, Equatable {
        case initial, afterTLS, afterSASL
        /// After a SASL2 `<success/>` with Bind2's `<bound/>`: the features that follow end the login.
        case afterBind2(jid: String)
    }

    enum SASLProgress {
        case scram(SCRAMClient, sentFinal: Bool)
        /// Waiting for `keyDerived(_:)` for this request.
        case derivingKeys(SCRAMClient, SCRAMKeyRequest)
        case simple
        /// A FAST token (HT-*): one message each way, the server's proof in `<success/>`.
        case token(HashedTokenClient)
    }

    enum State {
        case idle
        case awaitingFeatures(Stage)
        case awaitingProceed
        case awaitingTLSHandshake
        case awaitingRegistration(id: String)
        case authenticating(SASLProgress)
        /// SASL2: the mechanism's progress and what the `<authenticate/>` asked for.
        case authenticating2(SASLProgress, SASL2Request)
        case awaitingBind(id: String, sessionRequired: Bool)
        case awaitingSession(id: String)
        case awaitingResumed(sessionRequired: Bool)
        case finished
    }

    let configuration: Configuration
    let keyCache: SCRAMKeyCache?
    var state: State = .idle
    /// The mechanism chosen from the server's offer, once chosen.
    public internal(set) var chosenMechanism: SASLMechanism?
    /// The bound JID, once bound.
    public private(set) var boundJID: String?
    /// The features after authentication offered XEP-0198 stream management.
    public private(set) var offersStreamManagement = false
    /// The features after authentication offered XEP-0352 client state indication (`urn:xmpp:csi:0`).
    public private(set) var offersClientState = false
    /// The connection's channel-binding data (`tlsEstablished(channelBinding:)`); empty until then.
    public private(set) var channelBinding = ChannelBindingData.none
    /// Request/answer exchanges waited for so far (`LoginOutcome.roundTrips` defines them).
    public internal(set) var roundTrips = 0
    /// What the features SASL started from offered (for reports); nil before.
    public private(set) var offer: AuthenticationOffer?
    /// How the login went; set when the machine reports `.loggedIn` or `.resumed`.
    public private(set) var outcome: LoginOutcome?
    /// The condition with which the server refused `fastToken`, once it did (also when the password
    /// login that followed failed too): drop the token.
    public internal(set) var fastTokenRejected: String?
    /// What the finished login will report, filled in as it goes.
    var draft = LoginOutcome(path: .classic, roundTrips: 0, jid: nil, mechanism: "")
    /// The stream is TLS-protected (after STARTTLS or direct TLS).
    private var protected = false
    /// The resumption already travelled inside SASL2 (and failed): the classic bind must not try again.
    var inlineResumeTried = false

    /// - Parameter keyCache: the event loop's SCRAM key cache (one per loop), or nil for no caching.
    public init(configuration: Configuration, keyCache: SCRAMKeyCache?) {
        self.configuration = configuration
        self.keyCache = keyCache
    }

    /// True once the login ended, well or badly.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The `from` the next stream header carries (`Stanza.streamHeader(to:from:)`), read when the
    /// machine asks for `.openStream` or `.restartStream`: the user's bare JID when SASL2 may be used
    /// — servers offer SASL2 (and FAST needs it) only to a stream that names its user (ejabberd
    /// offers SASL2 only then) — on a TLS-protected stream (RFC 6120 §4.7.1), or on any with
    /// `mode` `.sasl2`; nil otherwise (the classic header, unchanged).
    public var streamHeaderFrom: String? {
        switch configuration.mode {
        case .classic: return nil
        case .auto: return protected ? "\(configuration.username)@\(configuration.domain)" : nil
        case .sasl2: return "\(configuration.username)@\(configuration.domain)"
        }
    }

    /// Call once the TCP connection is up.
    public mutating func start() -> [Action] {
        guard case .idle = state else { return [] }
        roundTrips += 1
        if configuration.tls == .direct {
            state = .awaitingTLSHandshake
            return [.enterPhase(.tls), .startTLS]
        }
        state = .awaitingFeatures(.initial)
        return [.enterPhase(.features), .openStream]
    }

    /// Call when the TLS handshake (STARTTLS or direct) completed, without channel-binding data.
    public mutating func tlsEstablished() -> [Action] {
        tlsEstablished(channelBinding: .none)
    }

    /// Call when the TLS handshake (STARTTLS or direct) completed, with the connection's
    /// channel-binding data (LoadEngine's `ChannelBindingReader`): `-PLUS` and FAST's bound
    /// mechanisms become usable.
    public mutating func tlsEstablished(channelBinding: ChannelBindingData) -> [Action] {
        guard case .awaitingTLSHandshake = state else { return [] }
        self.channelBinding = channelBinding
        protected = true
        roundTrips += 1
        state = .awaitingFeatures(.afterTLS)
        return [.enterPhase(.features), .restartStream]
    }

    /// Call when the server closed its stream.
    public mutating func streamClosed() -> [Action] {
        finish(.streamClosed)
    }

    /// Call for each depth-1 element the server sent.
    public mutating func received(_ element: XMLElement) -> [Action] {
        if case .finished = state { return [] }
        if element.name == "error" && element.namespace == XMPPNamespace.streams {
            let text = element.firstChild(named: "text", namespace: XMPPNamespace.streamErrors)?.text
            return finish(.streamError(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors), text: text))
        }
        switch state {
        case .finished:
            return []
        case .idle, .awaitingTLSHandshake:
            return unexpected(element)
        case .awaitingFeatures(let stage):
            guard element.name == "features" && element.namespace == XMPPNamespace.streams else { return unexpected(element) }
            return handleFeatures(element, stage: stage)
        case .awaitingProceed:
            guard element.namespace == XMPPNamespace.tls else { return unexpected(element) }
            if element.name == "proceed" {
                state = .awaitingTLSHandshake
                roundTrips += 1
                return [.startTLS]
            }
            return finish(.tlsRefused)
        case .awaitingRegistration(let id):
            guard isResponse(element, to: id) else { return unexpected(element) }
            var created = true
            if element.attribute("type") == "error" {
                let condition = Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.stanzas)
                if condition != "conflict" { return finish(.registrationFailed(condition: condition)) }
                created = false
            }
            state = .finished
            return [.registered(created: created), .authenticateOnFreshStream]
        case .authenticating(let progress):
            guard element.namespace == XMPPNamespace.sasl else { return unexpected(element) }
            return handleSASL(element, progress: progress)
        case .authenticating2(let progress, let request):
            guard element.namespace == AuthenticationOffer.sasl2Namespace else { return unexpected(element) }
            return handleSASL2(element, progress: progress, request: request)
        case .awaitingBind(let id, let sessionRequired):
            guard isResponse(element, to: id) else { return unexpected(element) }
            guard element.attribute("type") == "result" else {
                return finish(.bindFailed(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.stanzas)))
            }
            let jid = element.firstChild(named: "bind", namespace: XMPPNamespace.bind)?
                .firstChild(named: "jid", namespace: XMPPNamespace.bind)?.text
            boundJID = jid ?? "\(configuration.username)@\(configuration.domain)/\(configuration.resource)"
            if sessionRequired {
                let id = "sess1"
                state = .awaitingSession(id: id)
                let session = Stanza.iq(type: "set", id: id, child: XMLElement("session", namespace: XMPPNamespace.session))
                roundTrips += 1
                return [.enterPhase(.session), .send(session)]
            }
            return loggedIn(jid: boundJID!)
        case .awaitingSession(let id):
            guard isResponse(element, to: id) else { return unexpected(element) }
            guard element.attribute("type") == "result" else {
                return finish(.sessionFailed(condition: Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.stanzas)))
            }
            return loggedIn(jid: boundJID!)
        case .awaitingResumed(let sessionRequired):
            guard element.namespace == XMPPNamespace.streamManagement else { return unexpected(element) }
            switch element.name {
            case "resumed":
                return resumed(element)
            case "failed":
                draft.resumeFailed = true
                return [.resumeFailed(element), .enterPhase(.bind)] + bind(sessionRequired: sessionRequired)
            default:
                return unexpected(element)
            }
        }
    }

    // MARK: - Features

    private mutating func handleFeatures(_ features: XMLElement, stage: Stage) -> [Action] {
        switch stage {
        case .initial, .afterTLS:
            if stage == .initial, configuration.tls == .startTLS,
                features.firstChild(named: "starttls", namespace: XMPPNamespace.tls) != nil
            {
                state = .awaitingProceed
                roundTrips += 1
                return [.enterPhase(.tls), .send(XMLElement("starttls", namespace: XMPPNamespace.tls))]
            }
            // No downgrade: STARTTLS mode never authenticates (or registers) over a stream the server
            // left unencrypted; plaintext needs an explicit `--tls none`.
            if stage == .initial, configuration.tls == .startTLS {
                return finish(.tlsRequiredButNotOffered)
            }
            let offer = AuthenticationOffer(features: features)
            self.offer = offer
            if configuration.register {
                guard features.firstChild(named: "register", namespace: XMPPNamespace.registerFeature) != nil else {
                    return finish(.registrationNotOffered)
                }
                let id = "reg1"
                state = .awaitingRegistration(id: id)
                let query = XMLElement(
                    "query", namespace: XMPPNamespace.register,
                    children: [
                        .element(Stanza.textElement("username", configuration.username, namespace: XMPPNamespace.register)),
                        .element(Stanza.textElement("password", configuration.password, namespace: XMPPNamespace.register)),
                    ])
                roundTrips += 1
                return [.enterPhase(.register), .send(Stanza.iq(type: "set", id: id, child: query))]
            }
            if configuration.mode != .classic, let sasl2 = offer.sasl2 {
                return beginSASL2(offer, sasl2: sasl2)
            }
            if configuration.mode == .sasl2 { return finish(.sasl2NotOffered) }
            return beginSASL(offer)
        case .afterSASL:
            guard features.firstChild(named: "bind", namespace: XMPPNamespace.bind) != nil else {
                return finish(.protocolViolation("no <bind/> in the stream features after authentication"))
            }
            // RFC 6121 dropped session establishment; servers that still need it say so without <optional/>.
            let session = features.firstChild(named: "session", namespace: XMPPNamespace.session)
            let sessionRequired = session != nil && session?.firstChild(named: "optional", namespace: nil) == nil
            noteOffers(features)
            if offersStreamManagement, let resume = configuration.resume, !inlineResumeTried {
                state = .awaitingResumed(sessionRequired: sessionRequired)
                roundTrips += 1
                return [.enterPhase(.resume), .send(resume)]
            }
            return bind(sessionRequired: sessionRequired)
        case .afterBind2(let jid):
            // XEP-0388: the features of the authenticated stream follow <success/>; Bind2 bound already.
            noteOffers(features)
            boundJID = jid
            return loggedIn(jid: jid)
        }
    }

    /// What the features of the authenticated stream offer for after the login.
    private mutating func noteOffers(_ features: XMLElement) {
        offersStreamManagement = features.firstChild(named: "sm", namespace: XMPPNamespace.streamManagement) != nil
        offersClientState = features.firstChild(named: "csi", namespace: "urn:xmpp:csi:0") != nil
    }

    /// The login is over with `jid` bound: `outcome` is set.
    mutating func loggedIn(jid: String) -> [Action] {
        state = .finished
        draft.jid = jid
        draft.roundTrips = roundTrips
        outcome = draft
        return [.loggedIn(jid: jid)]
    }

    /// The stream was resumed (`<resumed/>` given): `outcome` is set.
    mutating func resumed(_ element: XMLElement) -> [Action] {
        state = .finished
        draft.path = .resumed
        draft.jid = nil
        draft.resumedHandled = StreamManagementState.handledCount(in: element)
        draft.roundTrips = roundTrips
        outcome = draft
        return [.resumed(element)]
    }

    private mutating func bind(sessionRequired: Bool) -> [Action] {
        let id = "bind1"
        state = .awaitingBind(id: id, sessionRequired: sessionRequired)
        roundTrips += 1
        let bind = XMLElement(
            "bind", namespace: XMPPNamespace.bind,
            children: [
                .element(Stanza.textElement("resource", configuration.resource, namespace: XMPPNamespace.bind))
            ])
        return [.send(Stanza.iq(type: "set", id: id, child: bind))]
    }

    // MARK: - Helpers

    private func isResponse(_ element: XMLElement, to id: String) -> Bool {
        element.name == "iq" && element.attribute("id") == id
            && (element.attribute("type") == "result" || element.attribute("type") == "error")
    }

    func unexpected(_ element: XMLElement) -> [Action] {
        [.unexpected(element, reply: AutoResponder.react(to: element).reply)]
    }

    mutating func finish(_ error: LoginError) -> [Action] {
        if case .finished = state { return [] }
        state = .finished
        return [.fail(error)]
    }
}
