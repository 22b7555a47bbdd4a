// tls-floor: what the TLS library itself holds per idle connection (issue 15), with no XMPP, parser,
// session or metrics on top. Built by `swift build -c release --product tls-floor`; driven by
// `scripts/bench-sessions` (ONLY=tls-memory), which prints the split next to xmppload's STARTTLS figure.
//
//   tls-floor serve --cert FILE --key FILE      NIO echo server on 127.0.0.1, a free port, TLS and plain
//                                               listeners; prints "tls PORT" and "plain PORT", serves
//                                               until it is killed
//   tls-floor connect --port P --connections N [--tls] [--bytes B]
//                                               one event loop opens N connections to 127.0.0.1:P (TLS 1.3
//                                               through NIOSSL with one shared NIOSSLContext and a
//                                               NIOSSLClientHandler each, as xmppload does; or plain),
//                                               sends B bytes (64) on each and waits for the echo, then idles
//                                               2 s and prints "connections N rss_before B rss_after A"
//                                               (bytes, from /proc/self/statm)
//
// The difference between the TLS and the plain client's marginal RSS per connection is what NIOSSL and
// BoringSSL hold per idle connection (handler, read and write buffers, the SSL object); the plain
// figure is a bare NIO socket channel.

import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Echoes what it reads (the server side of both listeners).
final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
}

/// Sends `size` bytes when active and succeeds `echoed` once as many came back; then stays idle.
final class PingOnce: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let echoed: EventLoopPromise<Void>
    private let size: Int
    private var received = 0

    init(echoed: EventLoopPromise<Void>, size: Int = 64) {
        self.echoed = echoed
        self.size = size
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(repeating: UInt8(ascii: "x"), count: size)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        if received >= size { echoed.succeed(()) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        echoed.fail(error)
        context.close(promise: nil)
    }
}

func residentBytes() -> Int {
    let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tls-floor: \(message)\n".utf8))
    exit(2)
}

func serve(certificate: String, key: String) throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let configuration = TLSConfiguration.makeServerConfiguration(
        certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
        privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
    let context = try NIOSSLContext(configuration: configuration)
    func bootstrap(tls: Bool) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
    }
    let tlsChannel = try bootstrap(tls: true).bind(host: "127.0.0.1", port: 0).wait()
    let plainChannel = try bootstrap(tls: false).bind(host: "127.0.0.1", port: 0).wait()
    FileHandle.standardOutput.write(
        Data("tls \(tlsChannel.localAddress!.port!)\nplain \(plainChannel.localAddress!.port!)\n".utf8))
    try tlsChannel.closeFuture.wait()  // until the process is killed
}

func connect(port: Int, connections: Int, tls: Bool, bytes: Int) throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.certificateVerification = .none
    let context = try NIOSSLContext(configuration: configuration)
    let before = residentBytes()
    var channels: [Channel] = []
    channels.reserveCapacity(connections)
    let batch = 200
    var opened = 0
    while opened < connections {
        let count = min(batch, connections - opened)
        var echoes: [EventLoopFuture<Void>] = []
        for _ in 0..<count {
            let echoed = group.next().makePromise(of: Void.self)
            let channel = try ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if tls {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: context, serverHostname: nil))
                        }
                        try channel.pipeline.syncOperations.addHandler(PingOnce(echoed: echoed, size: bytes))
                    }
                }
                .connect(host: "127.0.0.1", port: port).wait()
            channels.append(channel)
            echoes.append(echoed.futureResult)
        }
        try EventLoopFuture.andAllSucceed(echoes, on: group.next()).wait()
        opened += count
    }
    Thread.sleep(forTimeInterval: 2)
    let after = residentBytes()
    print("connections \(connections) rss_before \(before) rss_after \(after)")
    for channel in channels { channel.close(promise: nil) }
    try group.syncShutdownGracefully()
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    guard let certificate = option("--cert", in: arguments), let key = option("--key", in: arguments) else {
        fail("usage: tls-floor serve --cert FILE --key FILE")
    }
    try serve(certificate: certificate, key: key)
case "connect":
    guard let port = option("--port", in: arguments).flatMap(Int.init), (1...65535).contains(port),
        let connections = option("--connections", in: arguments).flatMap(Int.init), (1...18_000).contains(connections)
    else { fail("usage: tls-floor connect --port P --connections N (1...18000) [--tls]") }
    let bytes = option("--bytes", in: arguments).flatMap(Int.init) ?? 64
    guard (1...1_000_000).contains(bytes) else { fail("--bytes must be 1...1000000") }
    try connect(port: port, connections: connections, tls: arguments.contains("--tls"), bytes: bytes)
default:
    fail("usage: tls-floor serve --cert FILE --key FILE | connect --port P --connections N [--tls]")
}
