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

    /// Installs the BOSH pipeline on the first embedded channel; the second connection is the
    /// second embedded channel.
    final class EmbeddedBOSHConnector: UserConnecting {
        let channels: [EmbeddedChannel]
        unowned let context: LoopContext

        init(channels: [EmbeddedChannel], context: LoopContext) {
            self.channels = channels
            self.context = context
        }

        func connect(_ user: VirtualUser) {
            let second = channels[1]
            let context = self.context
            do {
                try BOSHConnector.install(on: channels[0], for: user, endpoint: BOSHPipelineTests.endpoint, context: context, firstRID: 1000) {
                    codec in
                    do {
                        try BOSHConnector.addHTTPHandlers(to: second, endpoint: BOSHPipelineTests.endpoint, context: context)
                        try second.pipeline.syncOperations.addHandler(BOSHSecondaryHandler(codec: codec))
                        try second.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5280)).wait()
                    } catch {
                        codec.secondaryFailed(ConnectionFailure(error))
                    }
                }
                try channels[0].connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5280)).wait()
            } catch {
                user.connectFailed(ConnectionFailure(error))
            }
        }
    }

    final class Harness {
        let loop = EmbeddedEventLoop()
        let channels: [EmbeddedChannel]
        let context: LoopContext
        let user: VirtualUser

        init() throws {
            let definition = try ProfileLoader.load(
                yaml: """
                    name: bosh
                    login: {sasl: PLAIN, resource: r1}
                    steps: [login, {presence: available}, {think: 1s}, logout]
                    """, file: "bosh.yaml")
            var configuration = RunConfiguration(
                host: "127.0.0.1", port: 5280, domain: "load.test", accounts: 1...10,
                password: "secret", outputDirectory: "/tmp/unused")
            configuration.endpoints = [BOSHPipelineTests.endpoint]
            let environment = RunEnvironment(
                configuration: configuration, runID: "test-run",
                server: try SocketAddress(ipAddress: "127.0.0.1", port: 5280), tls: nil,
                definition: definition, seed: 1, clockOrigin: loop.now)
            context = LoopContext(eventLoop: loop, environment: environment, loopIndex: 0)
            channels = [EmbeddedChannel(loop: loop), EmbeddedChannel(loop: loop)]
            context.connector = EmbeddedBOSHConnector(channels: channels, context: context)
            let identity = SessionIdentity(serial: 0, slot: 0, accountNumber: 1, username: "user1", bareJID: "user1@load.test")
            _ = environment.directory.claim(0)
            let rng = SeededGenerator(seed: 1, stream: 0)
            let machine = SessionMachine(
                identity: identity, script: environment.script(profile: 0, endpoint: 0), settings: environment.settings,
                host: context, generator: rng, intendedStart: context.now())
            user = VirtualUser(machine: machine, loop: context, userIndex: 0, phase: 0)
        }

        /// The request bodies the client wrote on connection `slot` since the last call, checking
        /// each is a POST to the endpoint's path.
        func requests(on slot: Int) throws -> [String] {
            var text = ""
            while let buffer = try channels[slot].readOutbound(as: ByteBuffer.self) {
                text += String(buffer: buffer)
            }
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
            try channels[slot].writeInbound(channels[slot].allocator.buffer(bytes: Array(http.utf8) + bytes))
            loop.run()
        }

        func snapshot() -> IntervalSnapshot {
            context.recorder.takeSnapshot(start: 0, end: 1)
        }
    }

    static let features =
        "<stream:features xmlns:stream='http://etherx.jabber.org/streams'><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"

    static func body(_ inner: String = "", _ attributes: String = "") -> String {
        "<body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams'\(attributes)>\(inner)</body>"
    }

    @Test func createLogInOverTwoConnectionsAndTerminate() throws {
        let harness = try Harness()
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
        _ = try? harness.channels[0].finish(acceptAlreadyClosed: true)
        _ = try? harness.channels[1].finish(acceptAlreadyClosed: true)
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
        let harness = try Harness()
        harness.context.start(harness.user)
        _ = try harness.requests(on: 0)
        try harness.channels[0].writeInbound(harness.channels[0].allocator.buffer(string: response))
        #expect(harness.user.machine.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.errors == [kind: 1], "\(snapshot.errors)")
        #expect(snapshot.counter(.sessionsFailed) == 1)
        _ = try? harness.channels[0].finish(acceptAlreadyClosed: true)
    }
}
