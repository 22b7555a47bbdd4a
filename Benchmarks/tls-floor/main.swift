// tls-floor: what the TLS library itself holds per idle connection (issue 15), with no XMPP, parser,
// session or metrics on top, and what a handshake costs in CPU (issue 30): NIOSSL (BoringSSL) beside a
// plain socket. (An OpenSSL client handler on Debian's libssl was measured here until issue 39 removed
// it: +24 % CPU per handshake, ~24 KiB per idle connection; docs/ARCHITECTURE.md keeps the figures.) Built by
// `swift build -c release --product tls-floor`; driven by `scripts/bench-sessions` (ONLY=tls-memory,
// ONLY=tls-libssl), which prints the split next to xmppload's STARTTLS figure.
//
//   tls-floor serve --cert FILE --key FILE      NIO echo server on 127.0.0.1, a free port, TLS and plain
//                                               listeners; prints "tls PORT" and "plain PORT", serves
//                                               until it is killed
//   tls-floor connect --port P --connections N [--tls] [--bytes B]
//                                               one event loop opens N connections to 127.0.0.1:P (TLS
//                                               through NIOSSL with one shared NIOSSLContext and a
//                                               NIOSSLClientHandler each, as xmppload does; or
//                                               plain), sends B bytes (64) on each and waits for the
//                                               echo, then idles 2 s and prints "connections N
//                                               rss_before B rss_after A heap_before H heap_after I"
//                                               (bytes; RSS from /proc/self/statm, heap = bytes malloc
//                                               has handed out, glibc's mallinfo2)
//   tls-floor handshakes --port P --count N --tls [--parallel K]
//                                               N connections, K (10) at a time: connect, handshake,
//                                               close; prints "handshakes N stack S cpu_us_per_handshake
//                                               C wall_s W" (user + system CPU of this process over N)
//
// The difference between the TLS and the plain client's marginal RSS per connection is what the TLS
// stack holds per idle connection (handler, read and write buffers, the SSL object); the plain
// figure is a bare NIO socket channel.

import CMallocInfo
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

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

/// Bytes malloc has handed out and not had back (glibc's mallinfo2).
func heapBytes() -> Int { Int(xl_heap_in_use()) }

/// Process CPU (user + system) in microseconds.
func cpuMicroseconds() -> Int { Int(xl_process_cpu_us()) }

/// Which TLS client a connection uses.
enum Stack: String {
    case plain, nio = "niossl"

    init(_ arguments: [String]) {
        self = arguments.contains("--tls") ? .nio : .plain
    }
}

/// The shared client contexts: made once per process, as xmppload makes one per run.
struct Contexts {
    let nio: NIOSSLContext

    init() throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        nio = try NIOSSLContext(configuration: configuration)
    }

    func add(_ stack: Stack, to channel: Channel) throws {
        switch stack {
        case .plain: break
        case .nio:
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: nio, serverHostname: nil))
        }
    }
}

/// Succeeds `done` when the TLS handshake completed, fails it on an error.
final class HandshakeDone: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { done.succeed(()) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.eof)
    }
}

func handshakes(port: Int, count: Int, stack: Stack, parallel: Int) throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let contexts = try Contexts()
    let startCPU = cpuMicroseconds()
    let start = DispatchTime.now()
    var done = 0
    while done < count {
        let batch = min(parallel, count - done)
        var futures: [EventLoopFuture<Void>] = []
        for _ in 0..<batch {
            let handshake = group.next().makePromise(of: Void.self)
            let channel = try ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try contexts.add(stack, to: channel)
                        try channel.pipeline.syncOperations.addHandler(HandshakeDone(done: handshake))
                    }
                }
                .connect(host: "127.0.0.1", port: port).wait()
            futures.append(handshake.futureResult.flatMap { channel.close() })
        }
        try EventLoopFuture.andAllSucceed(futures, on: group.next()).wait()
        done += batch
    }
    let cpu = cpuMicroseconds() - startCPU
    let wall = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    print("handshakes \(count) stack \(stack.rawValue) cpu_us_per_handshake \(cpu / count) wall_s \(String(format: "%.2f", wall))")
    try group.syncShutdownGracefully()
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

func connect(port: Int, connections: Int, stack: Stack, bytes: Int) throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let contexts = try Contexts()
    let before = residentBytes()
    let heapBefore = heapBytes()
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
                        try contexts.add(stack, to: channel)
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
    let heapAfter = heapBytes()
    print("connections \(connections) rss_before \(before) rss_after \(after) heap_before \(heapBefore) heap_after \(heapAfter)")
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
    try connect(port: port, connections: connections, stack: Stack(arguments), bytes: bytes)
case "handshakes":
    guard let port = option("--port", in: arguments).flatMap(Int.init), (1...65535).contains(port),
        let count = option("--count", in: arguments).flatMap(Int.init), (1...1_000_000).contains(count),
        Stack(arguments) != .plain
    else { fail("usage: tls-floor handshakes --port P --count N (1...1000000) --tls [--parallel K]") }
    let parallel = option("--parallel", in: arguments).flatMap(Int.init) ?? 10
    guard (1...1000).contains(parallel) else { fail("--parallel must be 1...1000") }
    try handshakes(port: port, count: count, stack: Stack(arguments), parallel: parallel)
default:
    fail(
        "usage: tls-floor serve --cert FILE --key FILE | connect --port P --connections N [--tls]"
            + " | handshakes --port P --count N --tls")
}
