import NIOCore
import NIOHTTP1
import SessionCore

/// The top of a BOSH session's second HTTP connection: hands each response to the session's
/// `BOSHCodec` and writes the requests the codec gives it. When the connection closes or fails, the
/// codec hears `secondaryFailed`. Loop-bound.
final class BOSHSecondaryHandler: ChannelInboundHandler {
    typealias InboundIn = NIOHTTPClientResponseFull
    typealias OutboundOut = HTTPClientRequestPart

    private let codec: BOSHCodec
    private var context: ChannelHandlerContext?

    init(codec: BOSHCodec) {
        self.codec = codec
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { codec.secondaryReady(self) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        codec.secondaryReady(self)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        codec.secondaryRead(unwrapInboundIn(data))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        codec.secondaryFailed(ConnectionFailure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        codec.secondaryFailed(.closed)
    }

    /// Writes one request's parts; `written` completes with the last part's write (fails at once
    /// when the connection is gone).
    func send(_ parts: [HTTPClientRequestPart], written: EventLoopPromise<Void>) {
        guard let context else { return written.fail(ChannelError.ioOnClosedChannel) }
        for (index, part) in parts.enumerated() {
            context.write(wrapOutboundOut(part), promise: index == parts.count - 1 ? written : nil)
        }
        context.flush()
    }

    func close() {
        context?.close(promise: nil)
    }
}
