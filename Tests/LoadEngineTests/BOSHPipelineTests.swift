import LoadProfile
import LoadResults
import NIOCore
import NIOEmbedded
import NIOHTTP1
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// The BOSH transport (XEP-0206) on two `EmbeddedChannel`s (the session's two HTTP connections):
/// session creation, SASL on the second connection while the first holds the long poll, restart,
/// bind, terminate. The server's side is written as Prosody 0.12's mod_bosh answers.
@Suite struct BOSHPipelineTests {
    static let endpoint = WeightedEndpoint(host: "127.0.0.1", port: 5280, transport: .bosh(secure: false, path: "/http-bind"))

    /// A BOSH session (login, presence, a 1 s think, logout) on `PipelineHarness`, first rid 1000;
    /// the run's TLS mode is the default (starttls): over BOSH the transport decides.
    static func harness() throws -> PipelineHarness {
        try PipelineHarness(
            profile: """
                name: bosh
                login: {sasl: PLAIN, resource: r1}
                steps: [login, {presence: available}, {think: 1s}, logout]
                """, endpoint: endpoint, firstRID: 1000)
    }

    static let features =
        "<stream:features xmlns:stream='http://etherx.jabber.org/streams'><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"

    static func body(_ inner: String = "", _ attributes: String = "") -> String {
        "<body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams'\(attributes)>\(inner)</body>"
    }

    @Test func createLogInOverTwoConnectionsAndTerminate() throws {
        let harness = try Self.harness()
        harness.context.start(harness.user)
        // Session creation on the first connection: rid 1000, no STARTTLS later (the run's default
        // TLS mode is starttls; over BOSH the transport decides).
        var sent = try harness.requests(on: 0)
        #expect(sent.count == 1 && sent[0].contains("rid='1000'") && sent[0].contains("to='load.test'"), "\(sent)")
        try harness.respond(
            on: 0,
            Self.body(
                Self.features,
                " sid='s1' wait='60' requests='2' hold='1' inactivity='60' ver='1.6' from='load.test' xmpp:version='1.0' xmlns:xmpp='urn:xmpp:xbosh'")
        )
        // The session answers the features at once: <auth/> rides the next request (rid 1001).
        sent = try harness.requests(on: 0)
        #expect(
            sent.count == 1 && sent[0].contains("rid='1001'") && sent[0].contains("sid='s1'")
                && sent[0].contains("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'"), "\(sent)")
        try harness.respond(on: 0, Self.body("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"))
        // The restart after SASL success.
        sent = try harness.requests(on: 0)
        #expect(sent.count == 1 && sent[0].contains("rid='1002'") && sent[0].contains("xmpp:restart='true'"), "\(sent)")
        try harness.respond(
            on: 0,
            Self.body("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"))
        sent = try harness.requests(on: 0)
        #expect(sent.count == 1 && sent[0].contains("rid='1003'") && sent[0].contains("<iq xmlns='jabber:client'"), "\(sent)")
        try harness.respond(
            on: 0,
            Self.body(
                "<iq xmlns='jabber:client' type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>"
            ))
        // Bound: the initial presence goes out; then the first connection is free again.
        sent = try harness.requests(on: 0)
        #expect(sent.count == 1 && sent[0].contains("rid='1004'") && sent[0].contains("<presence xmlns='jabber:client'"), "\(sent)")
        try harness.respond(on: 0, Self.body())
        // Nothing to say: an empty request is kept outstanding (the long poll).
        sent = try harness.requests(on: 0)
        #expect(sent == ["<body xmlns='http://jabber.org/protocol/httpbind' rid='1005' sid='s1'></body>"], "\(sent)")
        // The server pushes the presence echo through the long poll; a new long poll (1006) holds the
        // first connection while the profile thinks; then it logs out: the terminate goes on the
        // second connection, opened now.
        try harness.respond(on: 0, Self.body("<presence xmlns='jabber:client' from='user1@load.test/r1' to='user1@load.test/r1'/>"))
        sent = try harness.requests(on: 0)
        #expect(sent.count == 1 && sent[0].contains("rid='1006'"), "\(sent)")
        #expect(try harness.requests(on: 1).isEmpty)
        harness.loop.advanceTime(by: .seconds(1))
        let second = try harness.requests(on: 1)
        #expect(
            second.count == 1 && second[0].contains("rid='1007'") && second[0].contains("type='terminate'") && second[0].contains("unavailable"),
            "\(second)")
        // The server answers the held poll, then the terminate.
        try harness.respond(on: 0, Self.body())
        try harness.respond(on: 1, Self.body("", " type='terminate'"))
        #expect(harness.user.machine.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsLoggedIn) == 1 && snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.errors.isEmpty, "\(snapshot.errors)")
        #expect(snapshot.counter(.httpRequests) == 8 && snapshot.counter(.httpResponses) == 8)
        #expect(snapshot.latency["bosh.poll"]?.count == 2)
        #expect(snapshot.latency["bosh.request"]?.count == 6)
        #expect(snapshot.latency["login.tls"] == nil)
        harness.finishIgnoringLeftovers()
    }

    @Test(arguments: [
        ("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "http-404"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n<html/>", "web-protocol-error"),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n<body xmlns='http://jabber.org/protocol/httpbind' type='terminate' condition='host-unknown'></body>",
            "bosh-host-unknown"
        ),
    ])
    func aFailedCreationEndsTheSessionWithATypedError(response: String, kind: String) throws {
        let harness = try Self.harness()
        harness.context.start(harness.user)
        _ = try harness.requests(on: 0)
        try harness.channels[0].writeInbound(harness.channels[0].allocator.buffer(string: response))
        #expect(harness.user.machine.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.errors == [kind: 1], "\(snapshot.errors)")
        #expect(snapshot.counter(.sessionsFailed) == 1)
        harness.finishIgnoringLeftovers()
    }
}

extension PipelineHarness {
    /// The request bodies the client wrote on connection `slot` since the last call, checking each
    /// is a POST to `/http-bind`.
    func requests(on slot: Int) throws -> [String] {
        let text = String(decoding: try clientBytes(on: slot), as: UTF8.self)
        var bodies: [String] = []
        for request in text.components(separatedBy: "POST /http-bind HTTP/1.1\r\n").dropFirst() {
            let parts = request.components(separatedBy: "\r\n\r\n")
            #expect(parts.count == 2 && parts[0].contains("Content-Type: text/xml; charset=utf-8"), "\(request)")
            bodies.append(parts.count == 2 ? parts[1] : "")
        }
        return bodies
    }

    /// The server answers the oldest outstanding request on connection `slot` with `body`.
    func respond(on slot: Int, _ body: String) throws {
        let bytes = Array(body.utf8)
        let http = "HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: \(bytes.count)\r\n\r\n"
        try serverSends(Array(http.utf8) + bytes, on: slot)
    }
}
