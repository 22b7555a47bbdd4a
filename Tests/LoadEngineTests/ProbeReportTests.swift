import Foundation
import LoadResults
import NIOCore
import NIOEmbedded
import Testing
import XMPPCore

@testable import LoadEngine
@testable import ServerProbe

/// `xmppload probe`'s report: the profile settings its facts imply, its text, its JSON keys, and the
/// pure helpers of the probe (registration form fields, certificate name matching); plain values.
@Suite struct ProbeReportTests {
    static func base() -> ProbeReport {
        ProbeReport(server: "127.0.0.1:5222", domain: "load.test", account: "user1@load.test", tlsMode: "starttls", startedAt: "2026-11-27T08:00:00Z")
    }

    static func outcome(_ answer: ProbeReport.QueryOutcome.Answer, _ condition: String? = nil) -> ProbeReport.QueryOutcome {
        ProbeReport.QueryOutcome(answer: answer, condition: condition, roundTripMilliseconds: answer == .timeout ? nil : 1.5)
    }

    /// One fact set on an empty report, and the sentence it must imply (and one it must not).
    struct ImplicationRow: Sendable, CustomStringConvertible {
        let name: String
        let change: @Sendable (inout ProbeReport) -> Void
        let expected: String
        let absent: String?
        var description: String { name }
    }

    static let implicationRows: [ImplicationRow] = [
        ImplicationRow(
            name: "echo missing", change: { $0.presence = .init(echoed: false, latencyMilliseconds: nil, waitedMilliseconds: 2000) },
            expected: "presence is not echoed: the presence step completes after its bounded wait (2 s)", absent: "presence is echoed"),
        ImplicationRow(
            name: "echoed", change: { $0.presence = .init(echoed: true, latencyMilliseconds: 3, waitedMilliseconds: 2000) },
            expected: "presence is echoed", absent: "not echoed"),
        ImplicationRow(
            name: "ping error", change: { $0.ping = outcome(.error, "feature-not-implemented") },
            expected: "pings answered with an error (feature-not-implemented): keep-alive falls back to whitespace", absent: nil),
        ImplicationRow(name: "ping result", change: { $0.ping = outcome(.result) }, expected: "pings answered: keepalive", absent: "error"),
        ImplicationRow(name: "ping silent", change: { $0.ping = outcome(.timeout) }, expected: "pings not answered", absent: nil),
        ImplicationRow(
            name: "sm:2 only", change: { $0.streamManagement = ["urn:xmpp:sm:2"] },
            expected: "stream_management: server offers only urn:xmpp:sm:2 — not used", absent: nil),
        ImplicationRow(
            name: "sm:3", change: { $0.streamManagement = ["urn:xmpp:sm:2", "urn:xmpp:sm:3"] },
            expected: "stream_management: urn:xmpp:sm:3 offered", absent: "not used"),
        ImplicationRow(name: "no sm", change: { $0.streamManagement = [] }, expected: "stream_management: not offered", absent: nil),
        ImplicationRow(
            name: "no MUC", change: { $0.discoItems = .init(outcome: outcome(.result), items: ["pubsub.load.test"]) },
            expected: "no MUC service found: muc profiles will fail", absent: nil),
        ImplicationRow(
            name: "default MUC",
            change: { $0.discoItems = .init(outcome: outcome(.result), items: ["conference.load.test"], mucService: "conference.load.test") },
            expected: "MUC service conference.load.test: muc profiles work with the default service", absent: "will fail"),
        ImplicationRow(
            name: "other MUC", change: { $0.discoItems = .init(outcome: outcome(.result), items: ["muc.load.test"], mucService: "muc.load.test") },
            expected: "muc_join {service: muc.load.test}", absent: nil),
        ImplicationRow(
            name: "items unanswered", change: { $0.discoItems = .init(outcome: outcome(.timeout)) }, expected: "", absent: "MUC"),
        ImplicationRow(
            name: "registration open", change: { $0.registration = .init(offered: true, form: outcome(.result), fields: ["username", "password"]) },
            expected: "registration open: `xmppload provision` can create accounts", absent: "more than"),
        ImplicationRow(
            name: "registration with e-mail",
            change: { $0.registration = .init(offered: true, form: outcome(.result), fields: ["username", "password", "email"]) },
            expected: "asks for more than username/password (email)", absent: "can create"),
        ImplicationRow(
            name: "registration closed", change: { $0.registration = .init(offered: false) },
            expected: "registration not offered", absent: nil),
        ImplicationRow(
            name: "self-signed",
            change: { $0.tls = .init(version: "TLSv1.3", cipher: nil, certificate: nil, verification: "failed", problem: "self-signed") },
            expected: "the certificate does not verify (self-signed): runs need --insecure", absent: nil),
        ImplicationRow(
            name: "verified", change: { $0.tls = .init(version: "TLSv1.3", cipher: nil, certificate: nil, verification: "verified") },
            expected: "", absent: "certificate"),
        ImplicationRow(
            name: "no starttls",
            change: { $0.streamFeatures = [.init(stage: .initial, features: [.init(name: "mechanisms", namespace: XMPPNamespace.sasl)])] },
            expected: "STARTTLS is not offered", absent: nil),
        ImplicationRow(
            name: "no entity time", change: { $0.entityTime = .init(outcome: outcome(.error, "service-unavailable")) },
            expected: "no XEP-0202 entity time", absent: nil),
        ImplicationRow(
            name: "clock far off",
            change: {
                $0.entityTime = .init(
                    outcome: outcome(.result), clock: ClockOffset(offsetMilliseconds: -2500, uncertaintyMilliseconds: 1, samples: 5))
            },
            expected: "this host's clock is -2500 ms off the server's", absent: nil),
        ImplicationRow(
            name: "clock close",
            change: {
                $0.entityTime = .init(outcome: outcome(.result), clock: ClockOffset(offsetMilliseconds: 12, uncertaintyMilliseconds: 500, samples: 5))
            },
            expected: "", absent: "clock"),
        ImplicationRow(
            name: "close unanswered", change: { $0.streamClose = .init(answered: false, milliseconds: nil) },
            expected: "does not answer </stream:stream>", absent: nil),
    ]

    @Test(arguments: implicationRows)
    func implications(row: ImplicationRow) {
        var report = Self.base()
        row.change(&report)
        let lines = report.impliedSettings()
        if row.expected.isEmpty {
            #expect(lines.isEmpty, "\(lines)")
        } else {
            #expect(lines.contains { $0.contains(row.expected) }, "\(lines)")
        }
        if let absent = row.absent { #expect(!lines.contains { $0.contains(absent) }, "\(lines)") }
    }

    @Test func noFactsImplyNothing() {
        #expect(Self.base().impliedSettings().isEmpty)
    }

    /// Prosody 13 over TLS: the -PLUS mechanism is what runs pick by default (the probe said
    /// SCRAM-SHA-1 before, while runs used SCRAM-SHA-1-PLUS).
    @Test func aPlusMechanismIsTheDefaultOverTLS() {
        let offered = ["SCRAM-SHA-1", "OAUTHBEARER", "PLAIN", "SCRAM-SHA-1-PLUS"]
        let facts = ProbeReport.SASLFacts(
            offered: offered, supported: ["SCRAM-SHA-1", "PLAIN", "SCRAM-SHA-1-PLUS"], unsupported: ["OAUTHBEARER"])
        #expect(
            ProbeReport.saslLines(facts) == [
                "--sasl SCRAM-SHA-1-PLUS, SCRAM-SHA-1, PLAIN work; SCRAM-SHA-512, SCRAM-SHA-256 not offered (default: SCRAM-SHA-1-PLUS over TLS, SCRAM-SHA-1 without)",
                "offered but not spoken by xmppload: OAUTHBEARER",
            ])
    }

    @Test(arguments: [
        (
            ["PLAIN", "DIGEST-MD5", "SCRAM-SHA-1"],
            [
                "--sasl SCRAM-SHA-1, PLAIN work; SCRAM-SHA-512, SCRAM-SHA-256 not offered (default: SCRAM-SHA-1)",
                "offered but not spoken by xmppload: DIGEST-MD5",
            ]
        ),
        (
            ["SCRAM-SHA-512", "SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"],
            ["--sasl SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1, PLAIN work (default: SCRAM-SHA-512)"]
        ),
        (["PLAIN"], ["--sasl PLAIN works; SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1 not offered (default: PLAIN)"]),
        (
            ["DIGEST-MD5", "X-OAUTH2"],
            [
                "no usable SASL mechanism (offered: DIGEST-MD5, X-OAUTH2): every login fails with sasl-no-common-mechanism",
                "offered but not spoken by xmppload: DIGEST-MD5, X-OAUTH2",
            ]
        ),
    ])
    func saslLines(offered: [String], expected: [String]) {
        let facts = ProbeReport.SASLFacts(
            offered: offered, supported: offered.filter(SASLMechanism.isSupported), unsupported: offered.filter { !SASLMechanism.isSupported($0) })
        #expect(ProbeReport.saslLines(facts) == expected)
    }

    @Test(arguments: [
        ("load.test", "load.test", true), ("LOAD.test", "load.TEST", true), ("*.load.test", "chat.load.test", true),
        ("*.load.test", "load.test", false), ("*.load.test", "a.b.load.test", false), ("other.test", "load.test", false),
        ("*.test", ".test", false),
    ])
    func certificateNames(pattern: String, domain: String, matches: Bool) {
        #expect(ProbeTLS.name(pattern, matches: domain) == matches)
    }

    @Test(arguments: [
        ("sm", "urn:xmpp:sm:3", true), ("sm", "urn:xmpp:sm:2", true), ("ack", "http://www.xmpp.org/extensions/xep-0198.html#ns", true),
        ("bind", XMPPNamespace.bind, false), ("csi", "urn:xmpp:csi:0", false),
    ])
    func streamManagementFeatures(name: String, namespace: String, isStreamManagement: Bool) {
        #expect(ProbeSession.isStreamManagement(XMLElement(name, namespace: namespace)) == isStreamManagement)
    }

    @Test func handshakeFailureNamesBoringSSLsReason() {
        struct Fake: Error, CustomStringConvertible {
            var description: String {
                "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435703 error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /x/tls_record.cc:127]))"
            }
        }
        #expect(ProbeChannelHandler.handshakeFailure(Fake()) == "the TLS handshake failed: WRONG_VERSION_NUMBER")
    }

    @Test func registrationFormFields() throws {
        let parser = StanzaParser()
        let header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        func query(_ xml: String) throws -> XMLElement {
            let iq = try parser.parseElement(Array(xml.utf8), inScopeOf: header.namespaces)
            return try #require(iq.firstChild(named: "query", namespace: XMPPNamespace.register))
        }
        let legacy = try query(
            "<iq type='result' id='r'><query xmlns='jabber:iq:register'><instructions>Choose a name</instructions><username/><password/><email/></query></iq>"
        )
        #expect(ProbeSession.registrationForm(legacy).fields == ["username", "password", "email"])
        #expect(ProbeSession.registrationForm(legacy).instructions == "Choose a name")
        let form = try query(
            """
            <iq type='result' id='r'><query xmlns='jabber:iq:register'><username/><password/>\
            <x xmlns='jabber:x:data' type='form'><field type='hidden' var='FORM_TYPE'><value>jabber:iq:register</value></field>\
            <field type='fixed'><value>hello</value></field><field type='text-single' var='username'/>\
            <field type='text-private' var='password'/><field type='text-single' var='captcha'/></x></query></iq>
            """)
        #expect(ProbeSession.registrationForm(form).fields == ["username", "password", "captcha"])
        #expect(ProbeReport.Registration(offered: true, fields: ProbeSession.registrationForm(form).fields).extraFields == ["captcha"])
    }

    static func full() -> ProbeReport {
        var report = base()
        report.streamFeatures = [
            .init(stage: .initial, features: [.init(name: "starttls", namespace: XMPPNamespace.tls)]),
            .init(stage: .afterTLS, features: [.init(name: "mechanisms", namespace: XMPPNamespace.sasl)]),
        ]
        report.tls = .init(
            version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384",
            certificate: .init(
                subject: "CN=load.test", issuer: "CN=load.test", notBefore: "2026-01-01T00:00:00Z", notAfter: "2027-01-01T00:00:00Z",
                dnsNames: ["load.test"]),
            verification: "failed", problem: "self-signed", nameMatches: true)
        report.sasl = .init(offered: ["SCRAM-SHA-1", "DIGEST-MD5"], supported: ["SCRAM-SHA-1"], unsupported: ["DIGEST-MD5"], used: "SCRAM-SHA-1")
        report.streamManagement = ["urn:xmpp:sm:2"]
        report.login = .init(
            jid: "user1@load.test/probe", phases: [.init(phase: "connect", milliseconds: 0.4), .init(phase: "bind", milliseconds: 2)])
        report.presence = .init(echoed: false, latencyMilliseconds: nil, waitedMilliseconds: 2000)
        report.ping = outcome(.error, "feature-not-implemented")
        report.implications = report.impliedSettings()
        return report
    }

    @Test func textNamesEveryFact() {
        let text = Self.full().text()
        for expected in [
            "probe 127.0.0.1:5222 (domain load.test, tls starttls, account user1@load.test)",
            "stream features (initial):\n  starttls (urn:ietf:params:xml:ns:xmpp-tls)",
            "tls: TLSv1.3 TLS_AES_256_GCM_SHA384", "verification: failed (self-signed); domain matches the certificate",
            "sasl offered: SCRAM-SHA-1, DIGEST-MD5", "not supported here: DIGEST-MD5", "stream management (XEP-0198): urn:xmpp:sm:2",
            "logged in as user1@load.test/probe", "connect 0.4 ms, bind 2.0 ms", "initial presence: not echoed within 2000 ms",
            "ping (XEP-0199): error <feature-not-implemented/> in 1.5 ms", "implied profile settings:",
            "  - presence is not echoed",
        ] {
            #expect(text.contains(expected), "missing: \(expected)\n\(text)")
        }
        #expect(text.hasSuffix("\n"))
    }

    @Test func failureIsRenderedWithHint() {
        var report = Self.base()
        report.failure = .init(phase: "sasl", kind: "sasl-not-authorized", detail: "SASL failure <not-authorized/>", hint: "wrong password")
        let text = report.text()
        #expect(text.contains("FAILED at sasl: sasl-not-authorized: SASL failure <not-authorized/>\n  hint: wrong password"))
    }

    @Test func jsonKeysAreStableAndRoundTrip() throws {
        let report = Self.full()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in [
            "server", "domain", "account", "tls_mode", "started_at", "stream_features", "tls", "sasl", "stream_management", "login", "presence",
            "ping", "implications",
        ] {
            #expect(object[key] != nil, "missing key \(key)")
        }
        let tls = try #require(object["tls"] as? [String: Any])
        #expect(tls["name_matches"] as? Bool == true)
        #expect((object["ping"] as? [String: Any])?["rtt_ms"] as? Double == 1.5)
        #expect(try JSONDecoder().decode(ProbeReport.self, from: data) == report)
    }

    @Test(arguments: [
        ("sasl-not-authorized", "sasl", "wrong password"), ("connect-refused", "connect", "nothing listens at 127.0.0.1:5222"),
        ("xml-malformed", "features", "--tls direct"), ("tls-certificate-self-signed", "tls", "--insecure"),
    ])
    func failureHints(kind: String, phase: String, expected: String) throws {
        let hint = try #require(ServerProbe.hint(kind: kind, phase: phase, options: .init(host: "127.0.0.1", port: 5222, domain: "load.test")))
        #expect(hint.contains(expected))
    }

    /// The probe's handler over the real codec: arrivals come in order with the server's bytes
    /// however chunked, a wait with nothing to read ends after its timeout with nil, and a closed
    /// connection is reported once.
    @Test func handlerQueuesArrivalsAndTimesOut() throws {
        let channel = EmbeddedChannel()
        let made = ProbeChannelHandler.pipeline(tls: nil)
        try channel.pipeline.syncOperations.addHandlers(made.handlers)
        let probe = made.probe
        var got: [ProbeArrival?] = []
        probe.next(within: .seconds(5)).assumeIsolated().whenSuccess { got.append($0) }
        try channel.writeInbound(
            ByteBuffer(
                string:
                    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='load.test' id='1' version='1.0'><stream:fea"
            ))
        try channel.writeInbound(ByteBuffer(string: "tures><register xmlns='http://jabber.org/features/iq-register'/></stream:features>"))
        #expect(got.count == 1)
        guard case .opened = got.first??.event else {
            Issue.record("expected the header first, got \(String(describing: got))")
            return
        }
        probe.next(within: .seconds(5)).assumeIsolated().whenSuccess { got.append($0) }
        guard case .element(let features) = got.last??.event else {
            Issue.record("expected the features, got \(String(describing: got.last))")
            return
        }
        #expect(features.firstChild(named: "register", namespace: XMPPNamespace.registerFeature) != nil)

        probe.next(within: .seconds(5)).assumeIsolated().whenSuccess { got.append($0) }
        #expect(got.count == 2)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(got.count == 3 && got[2] == nil)

        probe.send(.element(Stanza.iq(type: "get", id: "q1", to: "load.test", child: XMLElement("ping", namespace: XMPPNamespace.ping))))
        let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: written).contains("urn:xmpp:ping"))

        try channel.writeInbound(ByteBuffer(string: "</stream:stream>"))
        probe.next(within: .seconds(5)).assumeIsolated().whenSuccess { got.append($0) }
        guard case .closed = got.last??.event else {
            Issue.record("expected the stream close, got \(String(describing: got.last))")
            return
        }
        _ = try channel.finish()
    }
}
