// OpenSSLClientHandler against a real TLS server on 127.0.0.1 (NIOSSL's server handler): handshake
// and echo over TLS 1.3 and 1.2, version and cipher, ALPN, certificate verification failures named
// as the certificate diagnosis names them, --insecure, and close_notify in both directions.

import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SessionCore
import Testing

@testable import LoadEngine

/// Certificates made by the openssl command line in a temporary directory: a CA, leaves it signed
/// (valid for load.test and 127.0.0.1, expired), a self-signed leaf, and one without an IP name.
struct TestCertificates {
    let directory: String
    var caPEM: String { "\(directory)/ca.pem" }
    var leafKey: String { "\(directory)/leaf.key" }

    static func make() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("xmppload-openssl-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "subjectAltName=DNS:load.test,IP:127.0.0.1\n".write(
            toFile: "\(directory)/san", atomically: true, encoding: .utf8)
        try "subjectAltName=DNS:load.test\n".write(toFile: "\(directory)/dns-only", atomically: true, encoding: .utf8)
        let steps = [
            "req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=TestCA -keyout ca.key -out ca.pem",
            "req -newkey rsa:2048 -nodes -subj /CN=load.test -keyout leaf.key -out leaf.csr",
            "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile san -out valid.pem",
            "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days -1 -extfile san -out expired.pem",
            "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile dns-only -out dns-only.pem",
            "x509 -req -in leaf.csr -signkey leaf.key -days 30 -extfile san -out self-signed.pem",
        ]
        for step in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = step.split(separator: " ").map(String.init)
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardError = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "openssl \(step)")
        }
        return TestCertificates(directory: directory)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// The server side: echoes what it reads and records how the connection ended (a clean close_notify
/// from the client, or an unclean EOF). Loop-bound; read through `ended` after the test's close.
final class ServerSide: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let ended: EventLoopPromise<String>
    let closesFirst: Bool

    init(ended: EventLoopPromise<String>, closesFirst: Bool) {
        self.ended = ended
        self.closesFirst = closesFirst
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if closesFirst {
            context.close(promise: nil)  // NIOSSL sends close_notify first
        } else {
            context.writeAndFlush(data, promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .shutdownCompleted = event { ended.succeed("clean") }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOSSLError, case .uncleanShutdown = error {
            ended.succeed("unclean")
        } else {
            ended.succeed("error \(error)")
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended.succeed("inactive")
    }
}

/// Carries a loop-bound value (a handler) between the test's task and its channel's loop; only
/// touched on that loop once the channel runs.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A NIOSSL TLS echo server on 127.0.0.1 with a given certificate.
struct TestServer {
    let group: MultiThreadedEventLoopGroup
    let channel: Channel
    /// How each accepted connection ended, in accept order.
    let endings: NIOLockedValueBox<[EventLoopFuture<String>]>

    static func start(
        certificate: String, key: String, maximumVersion: TLSVersion = .tlsv13, alpn: [String] = [],
        closesFirst: Bool = false, group: MultiThreadedEventLoopGroup
    ) throws -> TestServer {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        configuration.maximumTLSVersion = maximumVersion
        configuration.applicationProtocols = alpn
        let context = try NIOSSLContext(configuration: configuration)
        let endings = NIOLockedValueBox<[EventLoopFuture<String>]>([])
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ended = channel.eventLoop.makePromise(of: String.self)
                    endings.withLockedValue { $0.append(ended.futureResult) }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(ServerSide(ended: ended, closesFirst: closesFirst))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        return TestServer(group: group, channel: channel, endings: endings)
    }

    var port: Int { channel.localAddress!.port! }
}

/// The client side above the handler under test: records the handshake event, what it read, the
/// first error and the end of input. Loop-bound.
final class ClientSide: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let handshake: EventLoopPromise<String?>
    let received: EventLoopPromise<String>
    let closed: EventLoopPromise<Bool>
    private var text = ""
    private let expected: Int
    private var sawShutdown = false

    init(loop: EventLoop, expected: Int) {
        handshake = loop.makePromise()
        received = loop.makePromise()
        closed = loop.makePromise()
        self.expected = expected
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent else { return }
        switch event {
        case .handshakeCompleted(let negotiated): handshake.succeed(negotiated)
        case .shutdownCompleted: sawShutdown = true
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        text += String(buffer: unwrapInboundIn(data))
        if text.utf8.count >= expected { received.succeed(text) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        received.fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(ChannelError.eof)
        received.fail(ChannelError.eof)
        closed.succeed(sawShutdown)
    }
}

@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
struct OpenSSLClientHandlerTests {
    /// Connects through a new handler; returns the channel, its client side and its TLS handler.
    static func connect(
        port: Int, context: OpenSSLContext, serverHostname: String?, group: EventLoopGroup, expected: Int = 5
    ) async throws -> (Channel, ClientSide, Unchecked<OpenSSLClientHandler>) {
        let loop = group.next()
        let client = ClientSide(loop: loop, expected: expected)
        let tls = Unchecked(OpenSSLClientHandler(context: context, serverHostname: serverHostname))
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([tls.value, client])
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return (channel, client, tls)
    }

    static func withServer<T>(
        certificate: String, maximumVersion: TLSVersion = .tlsv13, alpn: [String] = [], closesFirst: Bool = false,
        _ body: (TestCertificates, TestServer, MultiThreadedEventLoopGroup) async throws -> T
    ) async throws -> T {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try TestServer.start(
            certificate: "\(certificates.directory)/\(certificate)", key: certificates.leafKey,
            maximumVersion: maximumVersion, alpn: alpn, closesFirst: closesFirst, group: group)
        do {
            let result = try await body(certificates, server, group)
            try await server.channel.close()
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await server.channel.close()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    @Test(arguments: [(TLSVersion.tlsv13, "TLSv1.3"), (.tlsv12, "TLSv1.2")])
    func handshakeVerifiesAndEchoes(version: TLSVersion, name: String) async throws {
        try await Self.withServer(certificate: "valid.pem", maximumVersion: version) { certificates, server, group in
            let context = try OpenSSLContext(verifies: true, trustedCertificates: certificates.caPEM)
            let (channel, client, tls) = try await Self.connect(
                port: server.port, context: context, serverHostname: "load.test", group: group)
            #expect(try await client.handshake.futureResult.get() == nil)
            try await channel.writeAndFlush(ByteBuffer(string: "hello")).get()
            #expect(try await client.received.futureResult.get() == "hello")
            let facts = try await channel.eventLoop.submit { (tls.value.tlsVersion, tls.value.cipherSuite) }.get()
            #expect(facts.0 == name)
            #expect(facts.1?.hasPrefix("TLS_") == true)
            try await channel.close()
        }
    }

    @Test func ipLiteralIsVerifiedAgainstTheAddress() async throws {
        try await Self.withServer(certificate: "valid.pem") { certificates, server, group in
            let context = try OpenSSLContext(verifies: true, trustedCertificates: certificates.caPEM)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: nil, group: group)
            #expect(try await client.handshake.futureResult.get() == nil)
            try await channel.close()
        }
    }

    /// Each failure is an `OpenSSLError` of kind `.certificate` naming the problem, and counts as
    /// `tls-certificate-<problem>`.
    @Test(arguments: [
        ("self-signed.pem", true, "load.test" as String?, TLSCertificateProblem.selfSigned),
        ("valid.pem", false, "load.test", .untrusted),
        ("valid.pem", true, "other.test", .hostnameMismatch),
        ("dns-only.pem", true, nil, .hostnameMismatch),
        ("expired.pem", true, "load.test", .expired),
    ])
    func verificationFailureNamesTheProblem(
        certificate: String, trustsCA: Bool, hostname: String?, problem: TLSCertificateProblem
    ) async throws {
        try await Self.withServer(certificate: certificate) { certificates, server, group in
            let context = try OpenSSLContext(
                verifies: true, trustedCertificates: trustsCA ? certificates.caPEM : nil)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: hostname, group: group)
            let error = await #expect(throws: OpenSSLError.self) { try await client.handshake.futureResult.get() }
            #expect(error?.kind == .certificate)
            #expect(error?.problem == problem)
            #expect(error?.verifyResult != 0)
            #expect(ConnectionFailure(error!) == .tlsCertificate(problem))
            _ = try await client.closed.futureResult.get()  // the handler closed the channel
            #expect(!channel.isActive)
        }
    }

    @Test func insecureAcceptsASelfSignedCertificateForAnotherName() async throws {
        try await Self.withServer(certificate: "self-signed.pem") { _, server, group in
            let context = try OpenSSLContext(verifies: false)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: "other.test", group: group)
            #expect(try await client.handshake.futureResult.get() == nil)
            try await channel.writeAndFlush(ByteBuffer(string: "hello")).get()
            #expect(try await client.received.futureResult.get() == "hello")
            try await channel.close()
        }
    }

    @Test func alpnNegotiatesTheServersChoice() async throws {
        try await Self.withServer(certificate: "valid.pem", alpn: ["http/1.1"]) { certificates, server, group in
            let context = try OpenSSLContext(
                verifies: true, alpn: ["h2", "http/1.1"], trustedCertificates: certificates.caPEM)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: "load.test", group: group)
            #expect(try await client.handshake.futureResult.get() == "http/1.1")
            try await channel.close()
        }
    }

    @Test func closeSendsCloseNotify() async throws {
        try await Self.withServer(certificate: "valid.pem") { _, server, group in
            let context = try OpenSSLContext(verifies: false)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: "load.test", group: group)
            try await channel.writeAndFlush(ByteBuffer(string: "hello")).get()
            _ = try await client.received.futureResult.get()
            try await channel.close()
            let ending = try #require(server.endings.withLockedValue { $0.first })
            #expect(try await ending.get() == "clean")
        }
    }

    @Test func serversCloseNotifyEndsTheInput() async throws {
        try await Self.withServer(certificate: "valid.pem", closesFirst: true) { _, server, group in
            let context = try OpenSSLContext(verifies: false)
            let (channel, client, _) = try await Self.connect(
                port: server.port, context: context, serverHostname: "load.test", group: group)
            try await channel.writeAndFlush(ByteBuffer(string: "bye")).get()
            #expect(try await client.closed.futureResult.get() == true)  // shutdownCompleted seen
            #expect(!channel.isActive)
        }
    }

    @Test func contextReleasesBuffersAndRejectsBadALPN() throws {
        #expect(try OpenSSLContext(verifies: true).releasesBuffers)
        #expect(throws: OpenSSLError.self) { try OpenSSLContext(verifies: false, alpn: [""]) }
        #expect(throws: OpenSSLError.self) {
            try OpenSSLContext(verifies: true, trustedCertificates: "/nonexistent/ca.pem")
        }
    }
}
