import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import NIOTLS
import Testing
import XMPPCore

@testable import LoadEngine

/// Channel-binding data read from NIOSSL after a real TLS 1.3 handshake with `openssl s_server`
/// on loopback, which prints the RFC 9266 keying material (`-keymatexport EXPORTER-Channel-Binding
/// -keymatexportlen 32`) for the connection: `tls-exporter` must equal it, per cipher suite's hash;
/// `tls-server-end-point` must be SHA-256 of the server's (ECDSA-with-SHA256) certificate.
@Suite(.serialized) struct ChannelBindingReaderTests {
    static let openssl = "/usr/bin/openssl"

    /// Reads the data at `handshakeCompleted`, as a session's handler would.
    final class Reader: ChannelInboundHandler, @unchecked Sendable {  // loop-bound; the promise crosses
        typealias InboundIn = ByteBuffer
        let tls: TLSSetup
        let promise: EventLoopPromise<ChannelBindingData>

        init(tls: TLSSetup, promise: EventLoopPromise<ChannelBindingData>) {
            self.tls = tls
            self.promise = promise
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
                promise.succeed(tls.channelBindingData(in: context.pipeline.syncOperations))
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
    }

    static func run(_ arguments: [String], in directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " "))")
    }

    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: openssl)), .timeLimit(.minutes(1)),
        arguments: [
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
        ])
    func matchesOpenSSLsKeyingMaterial(suite: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-cb-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.run(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-sha256", "-nodes", "-days", "30", "-subj", "/CN=load.test",
                "-keyout", "key.pem", "-out", "cert.pem",
            ], in: directory)
        try Self.run(["x509", "-in", "cert.pem", "-outform", "DER", "-out", "cert.der"], in: directory)
        let der = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/cert.der")))

        // s_server on a free loopback port; its stdin stays open (a pipe) so it serves until stopped.
        let port = try Self.freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: Self.openssl)
        server.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", "cert.pem", "-key", "key.pem", "-tls1_3", "-ciphersuites", suite,
            "-keymatexport", "EXPORTER-Channel-Binding", "-keymatexportlen", "32", "-naccept", "1",
        ]
        server.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        let input = Pipe()
        server.standardOutput = output
        server.standardInput = input
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            if server.isRunning { kill(server.processIdentifier, SIGTERM) }
            server.waitUntilExit()
        }

        let group = MultiThreadedEventLoopGroup.singleton
        let tls = try TLSSetup(domain: "load.test", insecure: true, channelBinding: true)
        let promise = group.next().makePromise(of: ChannelBindingData.self)
        var channel: (any Channel)?
        for _ in 0..<50 where channel == nil {
            channel = try? await ClientBootstrap(group: group).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(try tls.makeHandlers())
                    try channel.pipeline.syncOperations.addHandler(Reader(tls: tls, promise: promise))
                }
            }.connect(host: "127.0.0.1", port: port).get()
            if channel == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let connected = try #require(channel, "openssl s_server did not listen on \(port)")
        let data = try await promise.futureResult.get()
        try? await connected.close()
        try input.fileHandleForWriting.close()

        // s_server printed "Keying material: HEX" once the handshake completed; with its one
        // connection closed and its stdin at end, it exits.
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let line = try #require(printed.split(separator: "\n").first { $0.contains("Keying material:") })
        let expected = line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces).lowercased()
        #expect(data.tlsExporter.map { $0.map { String(format: "%02x", $0) }.joined() } == expected, "\(suite)")
        #expect(data.tlsServerEndPoint == ChannelBindingDerivation.tlsServerEndPoint(certificateDER: der))
        #expect(data.tlsServerEndPoint?.count == 32)
    }

    @Test func withoutChannelBindingNothingIsRead() throws {
        let tls = try TLSSetup(domain: "load.test", insecure: true)
        #expect(tls.exporterSecrets == nil)
        let channel = EmbeddedChannel()
        #expect(tls.channelBindingData(in: channel.pipeline.syncOperations) == .none)
    }

    /// The key log keeps only `EXPORTER_SECRET` lines, one per thread, taken once.
    @Test func keyLogKeepsOnlyTheExporterSecret() {
        let secrets = TLSExporterSecrets()
        let random = String(repeating: "ab", count: 32)
        secrets.record(line: ByteBuffer(string: "CLIENT_TRAFFIC_SECRET_0 \(random) \(String(repeating: "01", count: 32))\n"))
        #expect(secrets.takeForCurrentThread() == nil)
        secrets.record(line: ByteBuffer(string: "EXPORTER_SECRET \(random) \(String(repeating: "0F", count: 48))\n"))
        #expect(secrets.takeForCurrentThread() == [UInt8](repeating: 0x0F, count: 48))
        #expect(secrets.takeForCurrentThread() == nil)
        secrets.record(line: ByteBuffer(string: "EXPORTER_SECRET short zz\n"))
        #expect(secrets.takeForCurrentThread() == nil)
    }

    static func freePort() throws -> Int {
        let socket = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = socket.localAddress!.port!
        try socket.close().wait()
        return port
    }
}
