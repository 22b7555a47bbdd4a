// STARTTLS through OpenSSLClientHandler against a real Prosody on loopback: stream, <starttls/>,
// the handshake on the live channel after <proceed/>, a restarted stream and a PLAIN login.

import Foundation
import NIOCore
import NIOPosix
import NIOTLS
import SessionCore
import Testing

@testable import LoadEngine

/// Accumulates what the server sends (as text) and fulfils waits for a marker in it; records the
/// TLS handshake event and the first error. Loop-bound: used only on its channel's loop.
final class StreamTranscript: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var text = ""
    private var waits: [(marker: String, promise: EventLoopPromise<String>)] = []
    let handshake: EventLoopPromise<String?>

    init(loop: EventLoop) { handshake = loop.makePromise() }

    /// Succeeds with everything received since the last wait once `marker` is in it; fails after 10 s.
    func wait(for marker: String, loop: EventLoop) -> EventLoopFuture<String> {
        let promise = loop.makePromise(of: String.self)
        waits.append((marker, promise))
        let timeout = loop.scheduleTask(in: .seconds(10)) {
            promise.fail(LocalServerError(message: "no \(marker) within 10 s; received: \(self.text)"))
        }
        promise.futureResult.whenComplete { _ in timeout.cancel() }
        check()
        return promise.futureResult
    }

    private func check() {
        guard let first = waits.first, text.contains(first.marker) else { return }
        waits.removeFirst()
        let seen = text
        text = ""
        first.promise.succeed(seen)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        text += String(buffer: unwrapInboundIn(data))
        check()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            handshake.succeed(negotiated)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        for wait in waits { wait.promise.fail(error) }
        waits = []
    }
}

/// The TLS handler carried out of its loop for the test; only touched on that loop.
struct LoopBoundHandler: @unchecked Sendable {
    let value: OpenSSLClientHandler
}

@Suite(.serialized) struct OpenSSLStartTLSTests {
    static func header(_ domain: String) -> String {
        "<?xml version='1.0'?><stream:stream to='\(domain)' xmlns='jabber:client' "
            + "xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"
    }

    /// Runs `body` with a one-thread event loop group, shut down afterwards (also when it throws).
    static func withGroup(_ body: (MultiThreadedEventLoopGroup) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await body(group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    /// Runs the exchange up to `<proceed/>`, adds the handler, and returns the channel, transcript and handler.
    static func startTLS(
        _ server: LocalServer, context: OpenSSLContext, group: EventLoopGroup
    ) async throws -> (Channel, StreamTranscript, LoopBoundHandler) {
        let loop = group.next()
        let transcript = StreamTranscript(loop: loop)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(transcript) }
            }
            .connect(host: server.host, port: server.port).get()
        let features = loop.flatSubmit { transcript.wait(for: "</stream:features>", loop: loop) }
        try await channel.writeAndFlush(ByteBuffer(string: header(server.domain))).get()
        #expect(try await features.get().contains("urn:ietf:params:xml:ns:xmpp-tls"))
        let proceed = loop.flatSubmit { transcript.wait(for: "<proceed", loop: loop) }
        try await channel.writeAndFlush(ByteBuffer(string: "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")).get()
        _ = try await proceed.get()
        let tls = try await loop.submit {
            let tls = OpenSSLClientHandler(context: context, serverHostname: server.domain)
            try channel.pipeline.syncOperations.addHandler(tls, position: .first)
            return LoopBoundHandler(value: tls)
        }.get()
        return (channel, transcript, tls)
    }

    @Test(.timeLimit(.minutes(2)))
    func plainLoginAfterStartTLSTrustingTheServersCertificate() async throws {
        try await LocalServer.with(accounts: 2) { server in
            try await Self.withGroup { group in
                // Prosody's self-signed certificate for the domain, trusted: the name is verified too.
                let context = try OpenSSLContext(verifies: true, trustedCertificates: server.certificatePath)
                let (channel, transcript, tls) = try await Self.startTLS(server, context: context, group: group)
                let loop = channel.eventLoop
                #expect(try await transcript.handshake.futureResult.get() == nil)
                let facts = try await loop.submit { (tls.value.tlsVersion, tls.value.cipherSuite) }.get()
                #expect(facts.0 == "TLSv1.3" || facts.0 == "TLSv1.2")
                #expect(facts.1?.hasPrefix("TLS_") == true)

                let features = loop.flatSubmit { transcript.wait(for: "</stream:features>", loop: loop) }
                try await channel.writeAndFlush(ByteBuffer(string: Self.header(server.domain))).get()
                let offered = try await features.get()
                #expect(offered.contains("<mechanism>PLAIN</mechanism>"))
                #expect(!offered.contains("xmpp-tls"))

                let credentials = Data("\u{0}user1\u{0}\(server.password)".utf8).base64EncodedString()
                let success = loop.flatSubmit { transcript.wait(for: "<success", loop: loop) }
                try await channel.writeAndFlush(
                    ByteBuffer(string: "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>\(credentials)</auth>")
                ).get()
                _ = try await success.get()
                // The server answers the stream's end with its own and closes (its close_notify ends
                // the input; the handler closes the channel).
                let end = loop.flatSubmit { transcript.wait(for: "</stream:stream>", loop: loop) }
                try await channel.writeAndFlush(ByteBuffer(string: "</stream:stream>")).get()
                _ = try await end.get()
                try await channel.closeFuture.get()
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func untrustedSelfSignedCertificateFailsTheHandshakeWithItsProblem() async throws {
        try await LocalServer.with(accounts: 1) { server in
            try await Self.withGroup { group in
                let context = try OpenSSLContext(verifies: true)  // system store only
                let (channel, transcript, _) = try await Self.startTLS(server, context: context, group: group)
                let error = await #expect(throws: OpenSSLError.self) { try await transcript.handshake.futureResult.get() }
                #expect(error?.problem == .selfSigned)
                try await channel.closeFuture.get()
            }
        }
    }
}
