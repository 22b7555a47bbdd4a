import Foundation
import Testing

@testable import XMPPCore

/// The login state machine with plain values: no channel, no clock, no network.
@Suite struct LoginMachineTests {
    /// Parses one stanza as a server would have sent it (a fresh parser: tests run in parallel).
    static func element(_ xml: String) -> XMLElement {
        let parser = StanzaParser()
        let header = try! parser.parseHeader(
            Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='s1' from='load.test' version='1.0'>".utf8)
        )
        return try! parser.parseElement(Array(xml.utf8), in: header)
    }

    static let featuresTLS = element(
        """
        <stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism><mechanism>PLAIN</mechanism></mechanisms></stream:features>
        """)
    static let featuresSASL = element(
        """
        <stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>
        """)
    static let featuresRegisterSASL = element(
        """
        <stream:features><register xmlns='http://jabber.org/features/iq-register'/><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>
        """)
    static let featuresBind = element(
        """
        <stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><session xmlns='urn:ietf:params:xml:ns:xmpp-session'><optional/></session></stream:features>
        """)
    static let featuresBindSessionRequired = element(
        """
        <stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><session xmlns='urn:ietf:params:xml:ns:xmpp-session'/></stream:features>
        """)

    static func configuration(
        tls: TLSMode = .startTLS, mechanism: SASLMechanism? = nil,
        register: Bool = false
    ) -> LoginMachine.Configuration {
        .init(
            domain: "load.test", username: "user", password: "pencil", resource: "r1",
            tls: tls, mechanism: mechanism, register: register)
    }

    /// Pulls the payload of the single `.send` action of the given element name.
    static func sent(_ actions: [LoginMachine.Action], _ name: String) -> XMLElement? {
        for case .send(let element) in actions where element.name == name { return element }
        return nil
    }

    static func failure(_ actions: [LoginMachine.Action]) -> LoginError? {
        for case .fail(let error) in actions { return error }
        return nil
    }

    @Test func plainLoginWithPLAINWhenForced() {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain), keyCache: nil)
        #expect(machine.start() == [.enterPhase(.features), .openStream])
        let auth = Self.sent(machine.received(Self.featuresTLS), "auth")
        #expect(auth?.attribute("mechanism") == "PLAIN")
        #expect(auth?.text == Data("\0user\0pencil".utf8).base64EncodedString())
        #expect(machine.received(Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")) == [.enterPhase(.bind), .restartStream])
        let bind = Self.sent(machine.received(Self.featuresBind), "iq")
        #expect(bind?.attribute("type") == "set")
        #expect(bind?.firstChild(named: "bind", namespace: XMPPNamespace.bind)?.firstChild(named: "resource", namespace: nil)?.text == "r1")
        let actions = machine.received(
            Self.element(
                "<iq type='result' id='\(bind!.attribute("id")!)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user@load.test/r1</jid></bind></iq>"
            ))
        #expect(actions == [.loggedIn(jid: "user@load.test/r1")])
        #expect(machine.isFinished)
    }

    @Test func startTLSThenSCRAMSHA1WithServerSignatureVerified() throws {
        var machine = LoginMachine(configuration: Self.configuration(), keyCache: SCRAMKeyCache())
        _ = machine.start()
        let afterFeatures = machine.received(Self.featuresTLS)
        #expect(afterFeatures.contains(.enterPhase(.tls)))
        #expect(Self.sent(afterFeatures, "starttls") != nil)
        #expect(machine.received(Self.element("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")) == [.startTLS])
        #expect(machine.tlsEstablished() == [.enterPhase(.features), .restartStream])
        let auth = try #require(Self.sent(machine.received(Self.featuresSASL), "auth"))
        #expect(auth.attribute("mechanism") == "SCRAM-SHA-1")
        #expect(machine.chosenMechanism == .scramSHA1)
        // A server signature that cannot be right must fail the login with a typed error.
        let clientFirst = String(decoding: Data(base64Encoded: auth.text)!, as: UTF8.self)
        let nonce = clientFirst.split(separator: ",").first { $0.hasPrefix("r=") }!.dropFirst(2)
        let serverFirst = "r=\(nonce)srv,s=QSXCR+Q6sek8bf92,i=4096"
        let challenge = Self.element(
            "<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Data(serverFirst.utf8).base64EncodedString())</challenge>")
        #expect(Self.sent(machine.received(challenge), "response") != nil)
        let badSuccess = Self.element(
            "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Data("v=AAAAAAAAAAAAAAAAAAAAAAAAAAA=".utf8).base64EncodedString())</success>")
        let error = try #require(Self.failure(machine.received(badSuccess)))
        #expect(error.kind == "sasl-server-signature")
    }

    @Test func unexpectedIQBeforeSuccessIsAnsweredAndLoginGoesOn() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.featuresSASL)
        let push = Self.element("<iq type='set' id='profile1' from='load.test'><profile xmlns='urn:example:profile'><name>User</name></profile></iq>")
        let actions = machine.received(push)
        guard case .unexpected(_, let reply)? = actions.first else {
            Issue.record("expected .unexpected, got \(actions)")
            return
        }
        #expect(reply?.attribute("type") == "error")
        #expect(reply?.attribute("id") == "profile1")
        #expect(!machine.isFinished)
        #expect(machine.received(Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")) == [.enterPhase(.bind), .restartStream])
    }

    @Test func serverPingDuringLoginIsAnsweredWithResult() {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none), keyCache: nil)
        _ = machine.start()
        let ping = Self.element("<iq type='get' id='p1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        guard case .unexpected(_, let reply)? = machine.received(ping).first else {
            Issue.record("ping not reported as unexpected")
            return
        }
        #expect(reply?.attribute("type") == "result")
        #expect(reply?.attribute("to") == "load.test")
    }

    @Test(arguments: [
        ("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>bad</text></failure>", "sasl-not-authorized"),
        ("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><account-disabled/></failure>", "sasl-account-disabled"),
        ("<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>", "stream-host-unknown"),
        (
            "<stream:error><policy-violation xmlns='urn:ietf:params:xml:ns:xmpp-streams'/><text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>slow down</text></stream:error>",
            "stream-policy-violation"
        ),
    ])
    func failuresAreTyped(xml: String, kind: String) throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.featuresSASL)
        let error = try #require(Self.failure(machine.received(Self.element(xml))))
        #expect(error.kind == kind)
        #expect(machine.isFinished)
        #expect(machine.received(Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")) == [])
    }

    @Test func aForcedMechanismTheServerLacksNamesSASLFlagAndTheOffer() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .scramSHA256), keyCache: nil)
        _ = machine.start()
        // jabberd2's offer.
        let features = Self.element(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism>"
                + "<mechanism>DIGEST-MD5</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>")
        let error = try #require(Self.failure(machine.received(features)))
        #expect(error.kind == "sasl-mechanism-not-offered")
        #expect(
            error.description
                == "--sasl SCRAM-SHA-256: not offered by the server; offered: PLAIN, DIGEST-MD5, SCRAM-SHA-1 (unsupported here: DIGEST-MD5); usable: PLAIN, SCRAM-SHA-1"
        )
        #expect(error.description.count <= 160, "the report keeps 160 characters of it")
    }

    @Test func onlyUnsupportedMechanismsAreListedAsSuch() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none), keyCache: nil)
        _ = machine.start()
        let features = Self.element(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>DIGEST-MD5</mechanism>"
                + "<mechanism>CRAM-MD5</mechanism><mechanism>X-OAUTH2</mechanism><mechanism>SCRAM-SHA-1-PLUS</mechanism>"
                + "</mechanisms></stream:features>")
        let error = try #require(Self.failure(machine.received(features)))
        #expect(error.kind == "sasl-no-common-mechanism")
        #expect(
            error.description
                == "no usable SASL mechanism; offered: DIGEST-MD5, CRAM-MD5, X-OAUTH2, SCRAM-SHA-1-PLUS (unsupported here: DIGEST-MD5, CRAM-MD5, "
                + "X-OAUTH2, SCRAM-SHA-1-PLUS); xmppload uses SCRAM-SHA-512/-256/-1, PLAIN")
    }

    @Test func sessionEstablishedWhenServerRequiresIt() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain), keyCache: nil)
        _ = machine.start()
        _ = machine.received(Self.featuresSASL)
        _ = machine.received(Self.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"))
        let bind = try #require(Self.sent(machine.received(Self.featuresBindSessionRequired), "iq"))
        let afterBind = machine.received(
            Self.element(
                "<iq type='result' id='\(bind.attribute("id")!)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user@load.test/r1</jid></bind></iq>"
            ))
        #expect(afterBind.first == .enterPhase(.session))
        let session = try #require(Self.sent(afterBind, "iq"))
        #expect(session.firstChild(named: "session", namespace: XMPPNamespace.session) != nil)
        #expect(machine.received(Self.element("<iq type='result' id='\(session.attribute("id")!)'/>")) == [.loggedIn(jid: "user@load.test/r1")])
    }

    @Test func registrationConflictMeansTheAccountExists() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain, register: true), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Self.featuresRegisterSASL)
        #expect(actions.first == .enterPhase(.register))
        let request = try #require(Self.sent(actions, "iq"))
        let conflict = Self.element(
            "<iq type='error' id='\(request.attribute("id")!)'><error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        )
        let next = machine.received(conflict)
        #expect(next == [.registered(created: false), .authenticateOnFreshStream])
        #expect(machine.isFinished)
    }

    @Test func registrationEndsTheStreamAndAuthenticationFollowsOnAFreshOne() throws {
        var machine = LoginMachine(configuration: Self.configuration(tls: .none, mechanism: .plain, register: true), keyCache: nil)
        _ = machine.start()
        let request = try #require(Self.sent(machine.received(Self.featuresRegisterSASL), "iq"))
        let next = machine.received(Self.element("<iq type='result' id='\(request.attribute("id")!)'/>"))
        // No <auth/> on this stream: jabberd2 would never answer the bind after it.
        #expect(next == [.registered(created: true), .authenticateOnFreshStream])
        #expect(machine.received(Self.featuresSASL) == [])
    }

    @Test func streamCloseDuringLoginFails() throws {
        var machine = LoginMachine(configuration: Self.configuration(), keyCache: nil)
        _ = machine.start()
        #expect(Self.failure(machine.streamClosed())?.kind == "stream-closed")
    }

    @Test func directTLSStartsWithTheHandshake() {
        var machine = LoginMachine(configuration: Self.configuration(tls: .direct), keyCache: nil)
        #expect(machine.start() == [.enterPhase(.tls), .startTLS])
        #expect(machine.tlsEstablished() == [.enterPhase(.features), .restartStream])
        // After a direct-TLS handshake an offered <starttls/> is not used again.
        #expect(Self.sent(machine.received(Self.featuresTLS), "auth") != nil)
    }
}
