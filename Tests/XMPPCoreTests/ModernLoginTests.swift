import Foundation
import Testing

@testable import XMPPCore

/// The login machine's modern paths with plain values: SCRAM -PLUS and XEP-0440's rules, XEP-0474,
/// SASL2 with Bind2 (inline stream management, carbons, resumption), FAST tokens, and what each
/// login reports (`LoginOutcome`: path and round trips).
@Suite struct ModernLoginTests {
    typealias Action = LoginMachine.Action
    static let element = LoginMachineTests.element
    static let sent = LoginMachineTests.sent
    static let failure = LoginMachineTests.failure
    static let sasl2 = AuthenticationOffer.sasl2Namespace

    static let endPoint: [UInt8] = Array(repeating: 0xE1, count: 32)
    static let exporter: [UInt8] = Array(repeating: 0xE2, count: 32)
    static let bothBindings = ChannelBindingData(tlsServerEndPoint: endPoint, tlsExporter: exporter)

    static func configuration(
        tls: TLSMode = .none, mechanism: SASLMechanism? = nil, mode: LoginMode = .auto, resume: XMLElement? = nil,
        fastToken: FASTToken? = nil
    ) -> LoginMachine.Configuration {
        var configuration = LoginMachine.Configuration(
            domain: "load.test", username: "user", password: "pencil", resource: "r1", tls: tls, mechanism: mechanism, mode: mode,
            userAgentID: "d4565fa7-4d72-4749-b3d3-740edbf87770", inlineStreamManagement: true, inlineStreamManagementResume: true,
            enableCarbons: true, fastToken: fastToken, requestFASTToken: true)
        configuration.resume = resume
        return configuration
    }

    /// Features with SASL1 `mechanisms`, optional XEP-0440 `types`, and (with `sasl2`) SASL2 offering
    /// the same mechanisms with Bind2 (sm, carbons), inline sm and FAST.
    static func features(_ mechanisms: [String], types: [String]? = nil, sasl2: Bool = false, fast: [String] = ["HT-SHA-256-NONE"]) -> XMLElement {
        let list = mechanisms.map { "<mechanism>\($0)</mechanism>" }.joined()
        var xml = "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(list)</mechanisms>"
        if let types {
            xml +=
                "<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>"
                + types.map { "<channel-binding type='\($0)'/>" }.joined() + "</sasl-channel-binding>"
        }
        if sasl2 {
            xml +=
                "<authentication xmlns='urn:xmpp:sasl:2'>\(list)<inline>"
                + "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:sm:3'/><feature var='urn:xmpp:carbons:2'/></inline></bind>"
                + "<sm xmlns='urn:xmpp:sm:3'/>"
                + "<fast xmlns='urn:xmpp:fast:0'>\(fast.map { "<mechanism>\($0)</mechanism>" }.joined())</fast>"
                + "</inline></authentication>"
        }
        return element(xml + "</stream:features>")
    }

    static let featuresAfterBind2 = element(
        "<stream:features><sm xmlns='urn:xmpp:sm:3'/><csi xmlns='urn:xmpp:csi:0'/></stream:features>")

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    static func text(ofBase64 text: String) -> String { String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self) }

    /// The phases an action list enters, in order.
    static func phases(_ actions: [Action]) -> [LoginPhase] {
        actions.compactMap { if case .enterPhase(let phase) = $0 { return phase } else { return nil } }
    }

    // MARK: - Mechanism choice (XEP-0440's client rules)

    @Test(arguments: [
        // Without channel-binding data: exactly the login of servers without these features.
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-exporter"] as [String]?, ChannelBindingData.none, nil as SASLMechanism?, false, "SCRAM-SHA-1 n"),
        // With it: the strongest -PLUS over the strongest common type.
        (
            ["SCRAM-SHA-512", "SCRAM-SHA-256-PLUS", "SCRAM-SHA-1-PLUS"], ["tls-server-end-point", "tls-exporter"], bothBindings, nil, false,
            "SCRAM-SHA-256-PLUS p=tls-exporter"
        ),
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-server-end-point"], bothBindings, nil, true, "SCRAM-SHA-1-PLUS p=tls-server-end-point"),
        // Rule 3: no -PLUS, no types: y.
        (["SCRAM-SHA-256", "PLAIN"], nil, bothBindings, nil, false, "SCRAM-SHA-256 y"),
        // Rule 5: types but no -PLUS: a downgrade.
        (["SCRAM-SHA-256", "PLAIN"], ["tls-exporter"], bothBindings, nil, false, "sasl-downgrade"),
        // Rule 4: -PLUS over SASL2 without types: a downgrade; over SASL1 (ejabberd 23.01, tls-unique only): n.
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], nil, bothBindings, nil, true, "sasl-downgrade"),
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], nil, bothBindings, nil, false, "SCRAM-SHA-1 n"),
        // Rule 6 as XEP-0474 relaxes it: types none of ours: n.
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-unique"], bothBindings, nil, false, "SCRAM-SHA-1 n"),
        // Forced.
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], nil, bothBindings, .scramSHA1Plus, false, "SCRAM-SHA-1-PLUS p=tls-server-end-point"),
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-exporter"], ChannelBindingData.none, .scramSHA1Plus, false, "sasl-channel-binding"),
        (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-exporter"], bothBindings, .scramSHA1, false, "SCRAM-SHA-1 n"),
        (["SCRAM-SHA-1"], nil, bothBindings, .scramSHA1, false, "SCRAM-SHA-1 y"),
        (["SCRAM-SHA-1"], ["tls-exporter"], bothBindings, .scramSHA256Plus, false, "sasl-mechanism-not-offered"),
        (["PLAIN"], nil, bothBindings, nil, false, "PLAIN n"),
    ])
    func mechanismChoice(
        offered: [String], types: [String]?, data: ChannelBindingData, forced: SASLMechanism?, sasl2: Bool, expected: String
    ) {
        switch MechanismChoice.choose(offered: offered, channelBindingTypes: types, data: data, forced: forced, sasl2: sasl2) {
        case .success(let choice): #expect("\(choice.mechanism.name) \(choice.channelBinding)" == expected)
        case .failure(let error): #expect(error.kind == expected)
        }
    }

    // MARK: - Classic login with -PLUS

    /// STARTTLS, then SCRAM-SHA-256-PLUS over tls-exporter on RFC 6120 SASL; 8 round trips.
    @Test func classicSCRAMPlusOverTLSExporter() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .startTLS, mode: .classic), keyCache: nil)
        _ = machine.start()
        #expect(machine.streamHeaderFrom == nil)
        _ = machine.received(LoginMachineTests.featuresTLS)
        #expect(machine.received(Self.element("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")) == [.startTLS])
        #expect(machine.tlsEstablished(channelBinding: Self.bothBindings) == [.enterPhase(.features), .restartStream])
        #expect(machine.streamHeaderFrom == nil, "classic never names the user in the header")
        let offer = Self.features(["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], types: ["tls-exporter", "tls-server-end-point"], sasl2: true)
        let auth = try #require(Self.sent(machine.received(offer), "auth"))
        #expect(auth.attribute("mechanism") == "SCRAM-SHA-256-PLUS")
        let server = SCRAMServer(clientFirst: Self.text(ofBase64: auth.text), algorithm: .sha256)
        #expect(server.gs2Header == "p=tls-exporter,,")
        let response = try #require(
            Self.sent(
                machine.received(Self.element("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Self.base64(server.serverFirst))</challenge>")),
                "response"))
        let final = Self.text(ofBase64: response.text)
        #expect(server.cbind(of: final) == Array("p=tls-exporter,,".utf8) + Self.exporter)
        let success = Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Self.base64(server.serverFinal(for: final)))</success>")
        #expect(machine.received(success) == [.enterPhase(.bind), .restartStream])
        _ = machine.received(LoginMachineTests.featuresBind)
        #expect(machine.received(Self.element("<iq type='result' id='bind1'/>")) == [.loggedIn(jid: "user@load.test/r1")])
        let outcome = try #require(machine.outcome)
        #expect(outcome.path == .classic)
        #expect(outcome.mechanism == "SCRAM-SHA-256-PLUS")
        #expect(outcome.channelBinding == .tlsExporter)
        #expect(outcome.downgradeProtection == .absent)
        #expect(outcome.roundTrips == 8)  // header, starttls, TLS, header, auth, response, header, bind
    }

    /// A server whose signature was made over other channel-binding data (a man in the middle's).
    @Test func scramPlusWithAServerSignatureOverOtherBindingDataFails() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .direct, mode: .classic), keyCache: nil)
        _ = machine.start()
        _ = machine.tlsEstablished(channelBinding: ChannelBindingData(tlsServerEndPoint: Self.endPoint))
        let auth = try #require(Self.sent(machine.received(Self.features(["SCRAM-SHA-1-PLUS"], types: ["tls-server-end-point"])), "auth"))
        let server = SCRAMServer(clientFirst: Self.text(ofBase64: auth.text), algorithm: .sha1)
        let response = try #require(
            Self.sent(
                machine.received(Self.element("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Self.base64(server.serverFirst))</challenge>")),
                "response"))
        let final = Self.text(ofBase64: response.text)
        let theirs = final.replacingOccurrences(
            of: "c=" + Data(Array("p=tls-server-end-point,,".utf8) + Self.endPoint).base64EncodedString(),
            with: "c=" + Data(Array("p=tls-server-end-point,,".utf8) + [UInt8](repeating: 0, count: 32)).base64EncodedString())
        let success = Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Self.base64(server.serverFinal(for: theirs)))</success>")
        let error = try #require(Self.failure(machine.received(success)))
        #expect(error.kind == "sasl-server-signature")
        #expect(error.description.contains("tls-server-end-point"))
    }

    /// XEP-0474: a server-first hash over a list with -PLUS, while the features the client saw lost it.
    @Test func downgradeProtectionMismatchEndsTheLogin() throws {
        var machine = LoginMachine(configuration: Self.configuration(mode: .classic), keyCache: nil)
        _ = machine.start()
        let auth = try #require(Self.sent(machine.received(Self.features(["SCRAM-SHA-1", "PLAIN"])), "auth"))
        let server = SCRAMServer(clientFirst: Self.text(ofBase64: auth.text), algorithm: .sha1)
        let real = SCRAMDowngradeProtection(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "PLAIN"], channelBindingTypes: ["tls-exporter"])
        let serverFirst = server.serverFirst + ",h=" + Base64.encode(real.expectedHash(.sha1))
        let error = try #require(
            Self.failure(
                machine.received(Self.element("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Self.base64(serverFirst))</challenge>"))))
        #expect(error.kind == "sasl-downgrade")
    }

    /// XEP-0440 rule 5 on the features: channel-binding types but -PLUS gone.
    @Test func plusDroppedAfterTLSIsADowngrade() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .direct), keyCache: nil)
        _ = machine.start()
        _ = machine.tlsEstablished(channelBinding: Self.bothBindings)
        let error = try #require(Self.failure(machine.received(Self.features(["SCRAM-SHA-1", "PLAIN"], types: ["tls-server-end-point"]))))
        #expect(error.kind == "sasl-downgrade")
    }

    // MARK: - SASL2 and Bind2

    @Test func streamHeaderNamesTheUserWhenSASL2MayBeUsed() {
        var auto = LoginMachine(configuration: Self.configuration(tls: .startTLS), keyCache: nil)
        _ = auto.start()
        #expect(auto.streamHeaderFrom == nil, "not before TLS")
        _ = auto.received(LoginMachineTests.featuresTLS)
        _ = auto.received(Self.element("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"))
        _ = auto.tlsEstablished()
        #expect(auto.streamHeaderFrom == "user@load.test")
        #expect(LoginMachine(configuration: Self.configuration(mode: .sasl2), keyCache: nil).streamHeaderFrom == "user@load.test")
        #expect(LoginMachine(configuration: Self.configuration(mode: .auto), keyCache: nil).streamHeaderFrom == nil)
        #expect(
            String(decoding: Stanza.streamHeader(to: "load.test", from: "a'b@load.test"), as: UTF8.self)
                == "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='load.test' from='a&apos;b@load.test'>"
        )
    }

    /// PLAIN over SASL2 with Bind2, inline SM and carbons, asking for a FAST token: two round trips.
    @Test func sasl2PlainWithBind2InlineFeaturesAndAToken() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, mode: .sasl2), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Self.features(["PLAIN", "SCRAM-SHA-1"], sasl2: true))
        #expect(Self.phases(actions) == [.sasl, .bind], "one message: its answer carries the bind")
        let authenticate = try #require(Self.sent(actions, "authenticate"))
        #expect(authenticate.namespace == Self.sasl2)
        #expect(authenticate.attribute("mechanism") == "PLAIN")
        #expect(authenticate.firstChild(named: "initial-response", namespace: Self.sasl2)?.text == Self.base64("\0user\0pencil"))
        #expect(authenticate.firstChild(named: "user-agent", namespace: Self.sasl2)?.attribute("id") == "d4565fa7-4d72-4749-b3d3-740edbf87770")
        let bind = try #require(authenticate.firstChild(named: "bind", namespace: AuthenticationOffer.bind2Namespace))
        #expect(bind.firstChild(named: "tag", namespace: AuthenticationOffer.bind2Namespace)?.text == "xmppload")
        #expect(bind.firstChild(named: "enable", namespace: XMPPNamespace.streamManagement)?.attribute("resume") == "true")
        #expect(bind.firstChild(named: "enable", namespace: AuthenticationOffer.carbonsNamespace) != nil)
        #expect(
            authenticate.firstChild(named: "request-token", namespace: AuthenticationOffer.fastNamespace)?.attribute("mechanism") == "HT-SHA-256-NONE"
        )
        #expect(authenticate.firstChild(named: "resume", namespace: XMPPNamespace.streamManagement) == nil)

        let success = Self.element(
            "<success xmlns='urn:xmpp:sasl:2'><token xmlns='urn:xmpp:fast:0' token='WXZzciBwYmFm' expiry='2026-12-28T07:11:50Z'/>"
                + "<bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='true' max='300' location='127.0.0.1:5222'/></bound>"
                + "<authorization-identifier>user@load.test/xmppload.abc</authorization-identifier></success>")
        #expect(machine.received(success) == [])
        #expect(!machine.isFinished, "the features after <success/> end the login")
        #expect(machine.received(Self.featuresAfterBind2) == [.loggedIn(jid: "user@load.test/xmppload.abc")])
        #expect(machine.offersClientState)
        let outcome = try #require(machine.outcome)
        #expect(outcome.path == .sasl2Bind2)
        #expect(outcome.roundTrips == 2)
        #expect(outcome.mechanism == "PLAIN")
        #expect(outcome.carbonsEnabled)
        #expect(outcome.newFASTToken == FASTToken(mechanism: .htSHA256None, secret: "WXZzciBwYmFm", expiry: "2026-12-28T07:11:50Z"))
        guard case .enabled(let enabled, let grant) = outcome.streamManagement else {
            Issue.record("expected inline stream management, got \(String(describing: outcome.streamManagement))")
            return
        }
        #expect(enabled.name == "enabled")
        #expect(grant == StreamManagementState.Grant(resumptionID: "sm-1", location: "127.0.0.1:5222", maxSeconds: 300))
    }

    /// SCRAM-SHA-1-PLUS over SASL2 with the server's XEP-0474 hash over what it offered.
    @Test func sasl2SCRAMPlusWithDowngradeProtection() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .direct), keyCache: SCRAMKeyCache())
        _ = machine.start()
        _ = machine.tlsEstablished(channelBinding: ChannelBindingData(tlsServerEndPoint: Self.endPoint))
        #expect(machine.streamHeaderFrom == "user@load.test")
        let types = ["tls-server-end-point", "tls-exporter"]
        let start = machine.received(Self.features(["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "PLAIN"], types: types, sasl2: true))
        #expect(Self.phases(start) == [.sasl])
        let authenticate = try #require(Self.sent(start, "authenticate"))
        #expect(authenticate.attribute("mechanism") == "SCRAM-SHA-1-PLUS")
        let server = SCRAMServer(
            clientFirst: Self.text(ofBase64: authenticate.firstChild(named: "initial-response", namespace: Self.sasl2)!.text), algorithm: .sha1)
        let ssdp = SCRAMDowngradeProtection(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "PLAIN"], channelBindingTypes: types)
        let serverFirst = server.serverFirst + ",h=" + Base64.encode(ssdp.expectedHash(.sha1))
        let answer = machine.received(Self.element("<challenge xmlns='urn:xmpp:sasl:2'>\(Self.base64(serverFirst))</challenge>"))
        #expect(Self.phases(answer) == [.bind], "the answer to the last SASL message carries the bind")
        let response = try #require(Self.sent(answer, "response"))
        #expect(response.namespace == Self.sasl2)
        let final = Self.text(ofBase64: response.text)
        #expect(server.cbind(of: final) == Array("p=tls-server-end-point,,".utf8) + Self.endPoint)
        let success = Self.element(
            "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(Self.base64(server.serverFinal(for: final, sentFirst: serverFirst)))</additional-data>"
                + "<authorization-identifier>user@load.test/xmppload.1</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/></success>")
        #expect(machine.received(success) == [])
        #expect(machine.received(Self.featuresAfterBind2) == [.loggedIn(jid: "user@load.test/xmppload.1")])
        let outcome = try #require(machine.outcome)
        #expect(outcome.downgradeProtection == .verified)
        #expect(outcome.channelBinding == .tlsServerEndPoint)
        #expect(outcome.roundTrips == 4)  // TLS, header, authenticate, response
        #expect(outcome.streamManagement == .unanswered)
    }

    @Test func sasl2SuccessWithoutTheServerSignatureFails() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .scramSHA1), keyCache: nil)
        _ = machine.start()
        let authenticate = try #require(Self.sent(machine.received(Self.features(["SCRAM-SHA-1"], sasl2: true)), "authenticate"))
        let server = SCRAMServer(
            clientFirst: Self.text(ofBase64: authenticate.firstChild(named: "initial-response", namespace: Self.sasl2)!.text), algorithm: .sha1)
        _ = machine.received(Self.element("<challenge xmlns='urn:xmpp:sasl:2'>\(Self.base64(server.serverFirst))</challenge>"))
        let error = try #require(
            Self.failure(
                machine.received(
                    Self.element("<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>user@load.test</authorization-identifier></success>"))))
        #expect(error.kind == "sasl-server-signature")
    }

    /// Without Bind2 in the offer: SASL2 authenticates, the classic bind follows without a restart.
    @Test func sasl2WithoutBind2BindsClassically() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, mode: .sasl2), keyCache: nil)
        _ = machine.start()
        let offer = Self.element(
            "<stream:features><authentication xmlns='urn:xmpp:sasl:2'><mechanism>PLAIN</mechanism></authentication></stream:features>")
        let authenticate = try #require(Self.sent(machine.received(offer), "authenticate"))
        #expect(authenticate.firstChild(named: "bind", namespace: AuthenticationOffer.bind2Namespace) == nil)
        #expect(authenticate.firstChild(named: "request-token", namespace: AuthenticationOffer.fastNamespace) == nil, "no FAST offered")
        let success = Self.element("<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>user@load.test</authorization-identifier></success>")
        #expect(machine.received(success) == [.enterPhase(.bind)])
        _ = machine.received(LoginMachineTests.featuresBind)
        #expect(machine.received(Self.element("<iq type='result' id='bind1'/>")) == [.loggedIn(jid: "user@load.test/r1")])
        #expect(machine.outcome?.path == .sasl2)
        #expect(machine.outcome?.roundTrips == 3)
    }

    @Test(arguments: [
        (LoginMode.classic, true, "auth"),
        (.auto, true, "authenticate"),
        (.auto, false, "auth"),
        (.sasl2, false, "sasl2-not-offered"),
    ])
    func modeChoosesTheProtocol(mode: LoginMode, offered: Bool, expected: String) {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, mode: mode), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Self.features(["PLAIN"], sasl2: offered))
        if let error = Self.failure(actions) {
            #expect(error.kind == expected)
        } else {
            #expect(Self.sent(actions, expected) != nil, "\(actions)")
        }
    }

    /// A `<continue/>` asks for a task we do not perform: a typed end at the first one, no loop.
    @Test func sasl2ContinueEndsTheLoginAtOnce() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        let error = try #require(
            Self.failure(
                machine.received(
                    Self.element(
                        "<continue xmlns='urn:xmpp:sasl:2'><tasks><task>TOTP-EXAMPLE</task><task>UPGR-SCRAM-SHA-256</task></tasks></continue>"))))
        #expect(error.kind == "sasl2-continue")
        #expect(error.description.contains("TOTP-EXAMPLE"))
        #expect(machine.isFinished)
        #expect(machine.received(Self.element("<continue xmlns='urn:xmpp:sasl:2'><tasks><task>X</task></tasks></continue>")) == [])
    }

    /// The Bind2 answer that never comes: the machine waits in `bind` (the caller's login timeout names
    /// it) and unrelated input does not move it.
    @Test func aBind2AnswerThatNeverComesWaitsInBind() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain), keyCache: nil)
        _ = machine.start()
        #expect(Self.phases(machine.received(Self.features(["PLAIN"], sasl2: true))).last == .bind)
        let ping = machine.received(Self.element("<iq type='get' id='p1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>"))
        guard case .unexpected? = ping.first else {
            Issue.record("expected .unexpected, got \(ping)")
            return
        }
        #expect(!machine.isFinished)
        #expect(machine.outcome == nil)
    }

    // MARK: - FAST

    static let token = FASTToken(mechanism: .htSHA256None, secret: "n1cYxut5XHn3RysdIk6unCWVuPuGwrd7UYhQ/G3eoYg=", expiry: "2026-12-28T07:11:58Z")

    /// A FAST login: one message, the server's proof verified, the token rotated.
    @Test func fastLoginWithRotation() throws {
        var machine = LoginMachine(configuration: Self.configuration(fastToken: Self.token), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Self.features(["PLAIN"], sasl2: true))
        #expect(Self.phases(actions) == [.sasl, .bind])
        let authenticate = try #require(Self.sent(actions, "authenticate"))
        #expect(authenticate.attribute("mechanism") == "HT-SHA-256-NONE")
        #expect(authenticate.firstChild(named: "fast", namespace: AuthenticationOffer.fastNamespace) != nil)
        #expect(authenticate.firstChild(named: "request-token", namespace: AuthenticationOffer.fastNamespace) == nil)
        let client = try #require(HashedTokenClient(mechanism: .htSHA256None, username: "user", token: Self.token.secret, channelBinding: .none))
        #expect(authenticate.firstChild(named: "initial-response", namespace: Self.sasl2)?.text == Base64.encode(client.initialResponse()))
        let proof = Base64.encode(CryptoPrimitives.hmac(.sha256, key: Array(Self.token.secret.utf8), data: Array("Responder".utf8)))
        let success = Self.element(
            "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(proof)</additional-data><bound xmlns='urn:xmpp:bind:0'/>"
                + "<token xmlns='urn:xmpp:fast:0' token='next-token' expiry='2027-01-01T00:00:00Z'/>"
                + "<authorization-identifier>user@load.test/xmppload.x</authorization-identifier></success>")
        _ = machine.received(success)
        #expect(machine.received(Self.featuresAfterBind2) == [.loggedIn(jid: "user@load.test/xmppload.x")])
        let outcome = try #require(machine.outcome)
        #expect(outcome.path == .fast)
        #expect(outcome.mechanism == "HT-SHA-256-NONE")
        #expect(outcome.roundTrips == 2)
        #expect(outcome.newFASTToken?.secret == "next-token")
        #expect(outcome.newFASTToken?.mechanism == .htSHA256None)
    }

    @Test func fastProofThatDoesNotVerifyFails() throws {
        var machine = LoginMachine(configuration: Self.configuration(fastToken: Self.token), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        let error = try #require(
            Self.failure(
                machine.received(
                    Self.element("<success xmlns='urn:xmpp:sasl:2'><additional-data>AAAA</additional-data><bound xmlns='urn:xmpp:bind:0'/></success>")
                )))
        #expect(error.kind == "sasl-server-signature")
        #expect(!error.description.contains(Self.token.secret))
    }

    /// A refused token falls back to the password on the same stream, asks for a new token, and says so.
    @Test func refusedTokenFallsBackOnTheSameStream() throws {
        var machine = LoginMachine(configuration: Self.configuration(fastToken: Self.token), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        let fallback = machine.received(
            Self.element(
                "<failure xmlns='urn:xmpp:sasl:2'><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/><text>bad token</text></failure>"))
        let authenticate = try #require(Self.sent(fallback, "authenticate"))
        #expect(authenticate.attribute("mechanism") == "PLAIN")
        #expect(authenticate.firstChild(named: "request-token", namespace: AuthenticationOffer.fastNamespace) != nil)
        #expect(machine.fastTokenRejected == "not-authorized")
        _ = machine.received(
            Self.element(
                "<success xmlns='urn:xmpp:sasl:2'><bound xmlns='urn:xmpp:bind:0'/><token xmlns='urn:xmpp:fast:0' token='fresh' expiry='e'/></success>"
            ))
        _ = machine.received(Self.featuresAfterBind2)
        let outcome = try #require(machine.outcome)
        #expect(outcome.path == .sasl2Bind2)
        #expect(outcome.fastTokenRejected == "not-authorized")
        #expect(outcome.newFASTToken?.secret == "fresh")
        #expect(outcome.roundTrips == 3)
    }

    /// A password failure after the fallback ends the login; the rejection is still readable.
    @Test func refusedTokenThenRefusedPassword() throws {
        var machine = LoginMachine(configuration: Self.configuration(fastToken: Self.token), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        let failure = Self.element("<failure xmlns='urn:xmpp:sasl:2'><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>")
        _ = machine.received(failure)
        #expect(Self.failure(machine.received(failure))?.kind == "sasl-not-authorized")
        #expect(machine.fastTokenRejected == "not-authorized")
    }

    @Test(arguments: [
        ("<token xmlns='urn:xmpp:fast:0' expiry='e'/>", nil as String?),
        ("<token xmlns='urn:xmpp:fast:0' token='' expiry='e'/>", nil),
        ("<token xmlns='urn:xmpp:fast:0' token='\(String(repeating: "a", count: 1025))' expiry='e'/>", nil),
        ("<token xmlns='urn:xmpp:fast:0' token='first' expiry='e'/><token xmlns='urn:xmpp:fast:0' token='second' expiry='e'/>", "first"),
    ])
    func tokensAreBounded(tokens: String, expected: String?) {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        _ = machine.received(Self.element("<success xmlns='urn:xmpp:sasl:2'>\(tokens)<bound xmlns='urn:xmpp:bind:0'/></success>"))
        _ = machine.received(Self.featuresAfterBind2)
        #expect(machine.outcome?.newFASTToken?.secret == expected)
    }

    /// A token for a bound mechanism is used only where its channel binding is available.
    @Test func boundTokenWithoutItsBindingLogsInWithThePassword() throws {
        let bound = FASTToken(mechanism: .htSHA256Expr, secret: "t", expiry: "e")
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, fastToken: bound), keyCache: nil)
        _ = machine.start()
        let authenticate = try #require(
            Self.sent(machine.received(Self.features(["PLAIN"], sasl2: true, fast: ["HT-SHA-256-EXPR", "HT-SHA-256-NONE"])), "authenticate"))
        #expect(authenticate.attribute("mechanism") == "PLAIN")
        #expect(
            authenticate.firstChild(named: "request-token", namespace: AuthenticationOffer.fastNamespace)?.attribute("mechanism") == "HT-SHA-256-NONE"
        )
    }

    // MARK: - Resumption inside SASL2

    static let resume = XMLElement(
        "resume", namespace: XMPPNamespace.streamManagement, attributes: [XMLAttribute("previd", "sm-1"), XMLAttribute("h", "7")])

    @Test func inlineResumption() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, resume: Self.resume), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Self.features(["PLAIN"], sasl2: true))
        #expect(Self.phases(actions) == [.sasl, .resume])
        let authenticate = try #require(Self.sent(actions, "authenticate"))
        #expect(authenticate.firstChild(named: "resume", namespace: XMPPNamespace.streamManagement) == Self.resume)
        #expect(authenticate.firstChild(named: "bind", namespace: AuthenticationOffer.bind2Namespace) != nil, "bound only if resumption fails")
        let resumed = Self.element("<resumed xmlns='urn:xmpp:sm:3' h='12' previd='sm-1'/>")
        let done = machine.received(
            Self.element(
                "<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>user@load.test</authorization-identifier><resumed xmlns='urn:xmpp:sm:3' h='12' previd='sm-1'/></success>"
            ))
        #expect(done == [.resumed(resumed)])
        let outcome = try #require(machine.outcome)
        #expect(outcome.path == .resumed)
        #expect(outcome.resumedHandled == 12)
        #expect(outcome.roundTrips == 2)
    }

    @Test func inlineResumptionRefusedThenBound() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain, resume: Self.resume), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.features(["PLAIN"], sasl2: true))
        let failed = Self.element("<failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
        let actions = machine.received(
            Self.element(
                "<success xmlns='urn:xmpp:sasl:2'><failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>"
                    + "<bound xmlns='urn:xmpp:bind:0'/><authorization-identifier>user@load.test/x</authorization-identifier></success>"))
        #expect(actions == [.resumeFailed(failed), .enterPhase(.bind)])
        #expect(machine.received(Self.featuresAfterBind2) == [.loggedIn(jid: "user@load.test/x")])
        #expect(machine.outcome?.resumeFailed == true)
        #expect(machine.outcome?.path == .sasl2Bind2)
    }

    /// Servers without the modern features: the round trips of the classic plaintext login.
    @Test func classicRoundTrips() throws {
        var machine = LoginMachine(configuration: Self.configuration(mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(LoginMachineTests.featuresSASL)
        _ = machine.received(Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"))
        _ = machine.received(LoginMachineTests.featuresBindSessionRequired)
        _ = machine.received(Self.element("<iq type='result' id='bind1'/>"))
        _ = machine.received(Self.element("<iq type='result' id='sess1'/>"))
        #expect(machine.outcome == LoginOutcome(path: .classic, roundTrips: 5, jid: "user@load.test/r1", mechanism: "PLAIN"))
    }
}

/// The server side of one SCRAM exchange, for tests: server-first from the client-first, and the
/// server-final signature over the AuthMessage (RFC 5802 §3), with the password "pencil".
struct SCRAMServer {
    let algorithm: SCRAMAlgorithm
    let gs2Header: String
    let clientFirstBare: String
    let serverFirst: String

    init(clientFirst: String, algorithm: SCRAMAlgorithm) {
        self.algorithm = algorithm
        let bare = clientFirst.range(of: "n=")!
        gs2Header = String(clientFirst[..<bare.lowerBound])
        clientFirstBare = String(clientFirst[bare.lowerBound...])
        let nonce = clientFirstBare.split(separator: ",").first { $0.hasPrefix("r=") }!.dropFirst(2)
        serverFirst = "r=\(nonce)srv,s=QSXCR+Q6sek8bf92,i=4096"
    }

    /// The bytes `c=` carries in a client-final message.
    func cbind(of clientFinal: String) -> [UInt8] {
        let value = clientFinal.split(separator: ",").first { $0.hasPrefix("c=") }!.dropFirst(2)
        return Array(Data(base64Encoded: String(value))!)
    }

    /// `v=…` for `clientFinal` (its proof is not checked), after `sentFirst` (default: `serverFirst`).
    func serverFinal(for clientFinal: String, sentFirst: String? = nil) -> String {
        let withoutProof = String(clientFinal[..<clientFinal.range(of: ",p=")!.lowerBound])
        let keys = try! SCRAMKeyRequest(
            algorithm: algorithm, password: Array("pencil".utf8), salt: Array(Data(base64Encoded: "QSXCR+Q6sek8bf92")!), iterations: 4096
        ).derive()
        let authMessage = Array("\(clientFirstBare),\(sentFirst ?? serverFirst),\(withoutProof)".utf8)
        return "v=" + Base64.encode(CryptoPrimitives.hmac(algorithm, key: keys.serverKey, data: authMessage))
    }
}
