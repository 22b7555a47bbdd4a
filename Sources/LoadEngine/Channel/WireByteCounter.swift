import NIOCore

/// Counts the bytes a session sends and receives on the wire, below TLS (measurement rule 5).
///
/// Sits first in the pipeline (nearest the socket); TLS is inserted after it, so what it counts is
/// what crossed the network, handshakes included. It reports each read and write to its sink, the
/// loop's recorder (`bytes_received`, `bytes_sent`); no locks, the handler lives on one event loop.
package final class WireByteCounter: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private let sink: ByteCountSink
    /// When not nil, the first inbound bytes are kept here (up to 1 KiB): the probing session reads
    /// the TLS ServerHello from them.
    package var capture: [UInt8]?

    package init(sink: ByteCountSink) { self.sink = sink }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if let kept = capture?.count, kept < 1024 {
            capture! += buffer.readableBytesView.prefix(1024 - kept)
        }
        sink.received(buffer.readableBytes)
        context.fireChannelRead(data)
    }

    /// Counted as the socket takes the bytes, not as they are queued: a server that stops reading does
    /// not inflate `bytes_sent`. While the channel is writable (less than NIO's 64 KiB high-water mark
    /// queued) a write is counted at once — at most that much may still be in flight; once it is not,
    /// the writes until the next flush are counted together when they have left: the flush appends an
    /// empty write whose promise succeeds after all of them (writes complete in order). One promise
    /// per flush, not per write: a queue of thousands of small answers must not carry a promise and a
    /// callback each.
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let count = unwrapOutboundIn(data).readableBytes
        if context.channel.isWritable {
            sink.sent(count)
        } else {
            uncounted += count
        }
        context.write(data, promise: promise)
    }

    package func flush(context: ChannelHandlerContext) {
        if uncounted > 0 {
            let count = uncounted
            uncounted = 0
            let written = context.eventLoop.makePromise(of: Void.self)
            let sink = NIOLoopBound(self.sink, eventLoop: context.eventLoop)
            written.futureResult.whenSuccess { sink.value.sent(count) }
            context.write(wrapOutboundOut(Self.marker), promise: written)
        }
        context.flush()
    }

    /// Bytes written while the channel was not writable and not yet flushed.
    private var uncounted = 0
    /// The empty write a flush appends to learn when the writes before it have left.
    private static let marker = ByteBuffer()
}

/// Where `WireByteCounter` reports byte counts. Called on the channel's event loop only.
package protocol ByteCountSink: AnyObject {
    func received(_ byteCount: Int)
    func sent(_ byteCount: Int)
}
