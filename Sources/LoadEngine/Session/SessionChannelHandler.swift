import LoadResults
import NIOCore
import NIOSSL
import NIOTLS
import SessionCore
import XMPPCore

/// One connection of a virtual user: the top of its pipeline, as `SessionPipeline` builds it
/// (`WireByteCounter → [TLS] → XMPPStreamCodec → SessionChannelHandler` over TCP; over WebSocket and
/// BOSH the codec is `XMPPWebSocketCodec` or `BOSHCodec` above the HTTP handlers).
///
/// It only translates: channel events and decoded stream events go to its `VirtualUser` as session
/// events; the user's writes go down through the codec. Writes made while a read is being handled
/// are flushed once, at `channelReadComplete`, so the answers to one read leave in one write(2).
///
/// Backpressure: while the channel is not writable (more than NIO's high-water mark, 64 KiB, queued
/// because the server does not read), the channel's next read is held back (`read(context:)`) until
/// it drains: a server that floods requests and never reads the answers (pings, iqs) is throttled by
/// TCP instead of making the generator parse and queue answers without end. The session still ends
/// with `write-stalled` after `--write-stall` (the user's timer) or when more than
/// `maxBufferedWriteBytes` are queued.
/// Loop-bound. When the channel closes, NIO drops the handler, and the user keeps going without it.
final class SessionChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = XMPPStreamEvent
    typealias OutboundIn = XMPPStreamOutput
    typealias OutboundOut = XMPPStreamOutput

    private let user: VirtualUser
    let codec: any StreamRestarting
    /// TCP's codec, which takes writes and gives events directly instead of through the pipeline
    /// (`XMPPStreamCodec.receiver`); the web transports' codecs go through the pipeline.
    private let direct: XMPPStreamCodec?
    private let byteCounter: WireByteCounter
    private var context: ChannelHandlerContext?
    private var isReading = false
    private var needsFlush = false
    /// A read was asked while the channel was not writable; it is passed on once it is.
    private var readHeldBack = false

    init(user: VirtualUser, codec: any StreamRestarting, byteCounter: WireByteCounter) {
        self.user = user
        self.codec = codec
        self.byteCounter = byteCounter
        direct = codec as? XMPPStreamCodec
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        direct?.receiver = self
        user.attach(self)
        if context.channel.isActive { user.connectionActive(self) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        direct?.receiver = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        user.connectionActive(self)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received(unwrapInboundIn(data))
    }

    /// One decoded stream event (from `channelRead`, or from TCP's codec directly).
    func received(_ event: XMPPStreamEvent) {
        isReading = true
        switch event {
        case .opened(let header):
            user.connection(self, opened: header)
        case .element(let element):
            user.connection(self, sent: .received(element))
        case .closed:
            user.connection(self, sent: .streamClosed)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        isReading = false
        if needsFlush {
            needsFlush = false
            context.flush()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            if let captured = byteCounter.capture {
                byteCounter.capture = nil
                let version = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).tlsVersion
                user.loop.learned(
                    ServerFacts(
                        tlsVersion: version.flatMap { $0 }.map(TLSServerHello.name),
                        tlsCipher: TLSServerHello.cipherSuite(in: captured)))
            }
            // Synchronously, in the handshake's own step: the exporter secret read is the one this
            // thread's handshake just logged (`TLSExporterSecrets`).
            let channelBinding = user.loop.environment.tls?.channelBindingData(in: context.pipeline.syncOperations) ?? .none
            user.connection(self, sent: .tlsEstablished(channelBinding))
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        if writable && readHeldBack {
            readHeldBack = false
            context.read()
        }
        user.connection(self, writable: writable)
        context.fireChannelWritabilityChanged()
    }

    /// Reads only while the channel drains (see Backpressure above).
    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeldBack = true
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        user.loop.environment.closedConnections.wrappingIncrement(ordering: .relaxed)
        user.connection(self, sent: .connectionLost(nil))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as XMPPStreamError:
            user.connection(self, sent: .streamFailed(error))
        case let error as SessionError:
            user.connection(self, sent: .abort(error))
        default:
            user.connection(self, sent: .connectionLost(ConnectionFailure(error)))
        }
    }

    // MARK: - Acting for the user

    /// Writes; while a read is being handled the flush waits for `channelReadComplete`. While the
    /// socket does not drain, more than `maxBufferedBytes` queued ends the session (`write-stalled`):
    /// a server that stops reading cannot make the generator buffer without bound.
    func write(_ output: XMPPStreamOutput) {
        guard let context else { return }
        if !context.channel.isWritable, let buffered = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes),
            buffered > user.loop.environment.configuration.maxBufferedWriteBytes
        {
            user.connection(self, sent: .abort(.writeStalled))
            return
        }
        if let direct {
            direct.write(output, flush: !isReading)
            needsFlush = needsFlush || isReading
        } else if isReading {
            context.write(wrapOutboundOut(output), promise: nil)
            needsFlush = true
        } else {
            context.writeAndFlush(wrapOutboundOut(output), promise: nil)
        }
    }

    /// The next unit from the server is a new stream header (after STARTTLS or SASL success).
    func restartStream() {
        codec.restart()
    }

    /// Adds TLS right above the byte counter (bytes are counted on the wire, handshakes included);
    /// the handshake starts at once.
    func startTLS(_ tls: TLSSetup?) throws {
        guard let context, let tls else { throw SessionError.tlsUnavailable }
        // The read that carried <proceed/> ends here: the TLS handler inserted below us is handshaking
        // and does not pass that read's channelReadComplete up, so flush now and stop batching.
        if needsFlush { context.flush() }
        isReading = false
        needsFlush = false
        if user.machine.probesServer { byteCounter.capture = [] }
        try context.pipeline.syncOperations.addHandlers(try tls.makeHandlers(), position: .after(byteCounter))
    }

    func close() {
        context?.close(promise: nil)
    }
}
