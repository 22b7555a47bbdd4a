import Foundation
import Testing

@testable import XMPPCore

/// What a hostile server can do during login, with plain values: downgrade, SCRAM abuse, labels.
@Suite struct HostileLoginTests {
    typealias Fixtures = LoginMachineTests

    @Test func startTLSModeRefusesAServerThatDoesNotOfferIt() throws {
        var machine = LoginMachine(configuration: Fixtures.configuration(tls: .startTLS), keyCache: nil)
        _ = machine.start()
        let actions = machine.received(Fixtures.featuresSASL)
        #expect(Fixtures.failure(actions)?.kind == "tls-not-offered")
        // Nothing, least of all a password, was sent.
        #expect(!actions.contains { if case .send = $0 { true } else { false } })
        // With --tls none the same features log in with PLAIN.
        var plain = LoginMachine(configuration: Fixtures.configuration(tls: .none, mechanism: .plain), keyCache: nil)
        _ = plain.start()
        #expect(Fixtures.sent(plain.received(Fixtures.featuresSASL), "auth") != nil)
    }

    @Test func registrationNeedsTheAdvertisedFeature() {
        var machine = LoginMachine(configuration: Fixtures.configuration(tls: .none, register: true), keyCache: nil)
        _ = machine.start()
        #expect(Fixtures.failure(machine.received(Fixtures.featuresSASL))?.kind == "register-not-offered")
    }

    /// The SCRAM challenge for `client-first` with the given server-first continuation.
    static func challenge(for auth: XMLElement, serverFirst: (String) -> String) -> XMLElement {
        let clientFirst = String(decoding: Data(base64Encoded: auth.text)!, as: UTF8.self)
        let nonce = String(clientFirst.split(separator: ",").first { $0.hasPrefix("r=") }!.dropFirst(2))
        let text = Data(serverFirst(nonce).utf8).base64EncodedString()
        return Fixtures.element("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(text)</challenge>")
    }

    @Test func iterationCountAboveTheCapFailsBeforeAnyDerivation() throws {
        let cache = SCRAMKeyCache()
        var machine = LoginMachine(configuration: Fixtures.configuration(tls: .none, mechanism: .scramSHA1), keyCache: cache)
        _ = machine.start()
        let auth = try #require(Fixtures.sent(machine.received(Fixtures.featuresSASL), "auth"))
        let hostile = Self.challenge(for: auth) { "r=\($0)srv,s=QSXCR+Q6sek8bf92,i=10000000" }
        #expect(Fixtures.failure(machine.received(hostile))?.kind == "sasl-iteration-count")
        #expect(cache.derivations == 0)
    }

    @Test func keysCanBeDerivedElsewhere() throws {
        let cache = SCRAMKeyCache()
        var configuration = Fixtures.configuration(tls: .none, mechanism: .scramSHA1)
        configuration.deriveKeysElsewhere = true
        var machine = LoginMachine(configuration: configuration, keyCache: cache)
        _ = machine.start()
        let auth = try #require(Fixtures.sent(machine.received(Fixtures.featuresSASL), "auth"))
        let challenge = Self.challenge(for: auth) { "r=\($0)srv,s=QSXCR+Q6sek8bf92,i=4096" }
        let actions = machine.received(challenge)
        guard case .deriveKey(let request)? = actions.first, actions.count == 1 else {
            Issue.record("expected one .deriveKey, got \(actions)")
            return
        }
        #expect(request.iterations == 4096)
        #expect(!request.description.contains("pencil"))
        // A success before our proof is not accepted.
        var early = machine
        #expect(Fixtures.failure(early.received(Fixtures.element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"))) != nil)
        let derived = try request.derive()
        #expect(Fixtures.sent(machine.keyDerived(.success(derived)), "response") != nil)
        #expect(cache.derivations == 1)
        // The next login on this loop hits the cache and never asks for a derivation.
        var second = LoginMachine(configuration: configuration, keyCache: cache)
        _ = second.start()
        let auth2 = try #require(Fixtures.sent(second.received(Fixtures.featuresSASL), "auth"))
        let next = second.received(Self.challenge(for: auth2) { "r=\($0)srv,s=QSXCR+Q6sek8bf92,i=4096" })
        #expect(Fixtures.sent(next, "response") != nil)
        #expect(cache.hits == 1)
    }

    @Test(arguments: [
        ("s=QSXCR+Q6sek8bf92,r=NONCEsrv,i=4096", "sasl-malformed"),  // wrong order
        ("r=NONCEsrv,s=QSXCR+Q6sek8bf92,i=+4096", "sasl-iteration-count"),
        ("r=NONCEsrv,s=QSXCR+Q6sek8bf92,i=0x10", "sasl-iteration-count"),
        ("r=NONCEsrv,s=QSXCR+Q6sek8bf92,i=100001", "sasl-iteration-count"),
        ("r=NONCE\u{7F}srv,s=QSXCR+Q6sek8bf92,i=4096", "sasl-malformed"),
    ])
    func serverFirstGrammar(_ serverFirst: String, _ kind: String) {
        var client = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "NONCE")
        #expect { _ = try client.clientFinalMessage(serverFirst: Array(serverFirst.utf8)) } throws: {
            ($0 as? SASLError)?.kind == kind
        }
    }

    @Test func iterationCapIsConfigurableUpToTheCeiling() throws {
        var client = SCRAMClient(algorithm: .sha1, username: "u", password: "p", clientNonce: "NONCE", maxIterations: 200_000)
        let request = try client.keyRequest(serverFirst: Array("r=NONCEsrv,s=QSXCR+Q6sek8bf92,i=150000".utf8))
        #expect(request.iterations == 150_000)
        #expect(
            SCRAMClient(algorithm: .sha1, username: "u", password: "p", maxIterations: .max).maxIterations
                == SCRAMClient.iterationCeiling)
    }

    @Test func constantTimeComparison() {
        #expect(CryptoPrimitives.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!CryptoPrimitives.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!CryptoPrimitives.constantTimeEqual([1, 2, 3], [1, 2]))
    }

    /// A server cannot mint new error labels: unknown conditions are undefined-condition.
    @Test(arguments: [
        (
            "<iq type='error' id='x'><error type='cancel'><made-up-4711 xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            XMPPNamespace.stanzas, "undefined-condition"
        ),
        (
            "<iq type='error' id='x'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            XMPPNamespace.stanzas, "item-not-found"
        ),
        ("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><zz-\(UUID().uuidString)/></failure>", XMPPNamespace.sasl, "undefined-condition"),
        ("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>", XMPPNamespace.sasl, "not-authorized"),
    ])
    func errorConditionLabelsAreBounded(_ xml: String, _ namespace: String, _ condition: String) {
        #expect(Stanza.errorCondition(of: Fixtures.element(xml), conditionNamespace: namespace) == condition)
    }
}
