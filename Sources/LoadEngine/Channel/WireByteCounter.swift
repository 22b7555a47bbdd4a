import NIOCore

/// Counts the bytes a session sends and receives on the wire, below TLS (measurement rule 5).
///
/// Sits first in the pipeline (nearest the socket); TLS is inserted after it, so what it counts is
/// what crossed the network, handshakes included. It reports each read and write to its sink, the
/// loop's recorder (`bytes_received`, `bytes_sent`); no locks, the handler lives on one event loop.
final class WireByteCounter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let sink: ByteCountSink
    /// When not nil, the first inbound bytes are kept here (up to 1 KiB): the probing session reads
    /// the TLS ServerHello from them.
    var capture: [UInt8]?

    init(sink: ByteCountSink) { self.sink = sink }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if let kept = capture?.count, kept < 1024 {
            capture! += buffer.readableBytesView.prefix(1024 - kept)
        }
        sink.received(buffer.readableBytes)
        context.fireChannelRead(data)
    }

    /// Counted when the socket took the bytes (the write's promise succeeded), not when queued: a
    /// server that stops reading does not inflate `bytes_sent`.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let count = unwrapOutboundIn(data).readableBytes
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        let sink = self.sink
        written.futureResult.whenSuccess { sink.sent(count) }
        context.write(data, promise: written)
    }
}

/// Where `WireByteCounter` reports byte counts. Called on the channel's event loop only.
protocol ByteCountSink: AnyObject {
    func received(_ byteCount: Int)
    func sent(_ byteCount: Int)
}
