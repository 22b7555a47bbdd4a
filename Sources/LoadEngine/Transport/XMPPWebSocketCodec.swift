import NIOCore
import NIOWebSocket
import SessionCore
import XMPPCore

/// The XMPP stream codec over WebSocket (RFC 7395), under the same `SessionChannelHandler` as TCP's
/// `XMPPStreamCodec`: in, one text message → one `XMPPStreamEvent`; out, one `XMPPStreamOutput` →
/// one masked text frame.
///
/// Framing (RFC 7395 §3.3): every message is one complete XML element with its own namespace
/// declarations. `<open xmlns='urn:ietf:params:xml:ns:xmpp-framing'/>` stands for the stream header
/// (`.opened`), `<close xmlns='…framing'/>` for `</stream:stream>` (`.closed`); anything else is parsed
/// with the event loop's shared `StanzaParser` as one element (`.element`), in a `jabber:client`
/// default namespace for stanzas that do not declare it. Messages arrive whole: the frame decoder and
/// `NIOWebSocketFrameAggregator` below bound them to `XMLLimits.maxElementBytes`.
///
/// Control frames: a ping is answered with a pong carrying its data; the server's close frame is
/// answered with a close frame, then the channel closes (the session sees the connection go, as a TCP
/// close); when the session closes the connection, a close frame (1000) goes first. A binary message is a protocol error (`web-protocol-error`). After an error the rest of the
/// connection's input is dropped. `restart()` has nothing to reset: each message stands alone.
/// Loop-bound: one instance per channel.
final class XMPPWebSocketCodec: ChannelDuplexHandler, StreamRestarting {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = XMPPStreamEvent
    typealias OutboundIn = XMPPStreamOutput
    typealias OutboundOut = WebSocketFrame

    /// RFC 7395's framing namespace (`<open/>`, `<close/>`).
    static let framingNamespace = "urn:ietf:params:xml:ns:xmpp-framing"
    /// What each message is parsed in: a client stream's namespaces (`jabber:client`, `stream:`).
    private static let messageScope = StreamHeader()

    private let parser: StanzaParser
    private let scratch: OutboundScratch
    private var failed = false
    private var closeSent = false

    /// `parser` and `scratch` are the event loop's, shared by its connections.
    init(parser: StanzaParser, scratch: OutboundScratch) {
        self.parser = parser
        self.scratch = scratch
    }

    func restart() {}

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let event: XMPPStreamEvent
            do { event = try Self.decode(frame.unmaskedData, parser: parser) } catch {
                return fail(context: context, error)
            }
            context.fireChannelRead(wrapInboundOut(event))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            sendCloseFrame(context: context, data: frame.unmaskedData)
            context.close(promise: nil)
        case .binary:
            fail(context: context, SessionError.connection(.webProtocol))
        default:
            break
        }
    }

    /// The event one text message stands for.
    static func decode(_ message: ByteBuffer, parser: StanzaParser) throws -> XMPPStreamEvent {
        let element = try message.withUnsafeReadableBytes { bytes throws(XMPPStreamError) in
            try parser.parseElement(bytes, in: messageScope)
        }
        guard element.namespace == framingNamespace else { return .element(element) }
        switch element.name {
        case "open":
            return .opened(
                StreamHeader(
                    from: element.attribute("from"), to: element.attribute("to"), id: element.attribute("id"),
                    version: element.attribute("version"), language: element.attribute("xml:lang")))
        case "close":
            return .closed
        default:
            return .element(element)
        }
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        failed = true
        context.fireErrorCaught(error)
    }

    private func sendCloseFrame(context: ChannelHandlerContext, data: ByteBuffer? = nil) {
        guard !closeSent else { return }
        closeSent = true
        var payload = data ?? context.channel.allocator.buffer(capacity: 2)
        if data == nil { payload.write(webSocketErrorCode: .normalClosure) }
        // Only the status code is echoed back (RFC 6455 §5.5.1).
        let echoed = payload.getSlice(at: payload.readerIndex, length: min(2, payload.readableBytes)) ?? payload
        let close = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: echoed)
        context.writeAndFlush(wrapOutboundOut(close), promise: nil)
    }

    // MARK: - Outbound

    /// The session closes its connection: a close frame first (RFC 6455 §7.1.1), unless one was sent.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, context.channel.isActive { sendCloseFrame(context: context) }
        context.close(mode: mode, promise: promise)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let output = unwrapOutboundIn(data)
        let message = scratch.encode(allocator: context.channel.allocator) { bytes in
            switch output {
            case .header(let domain, let from):
                Self.openElement(to: domain, from: from).serialize(into: &bytes, parentNamespace: "")
            case .element(let element):
                // Each message declares its namespace (RFC 7395 §3.3.3): no parent namespace.
                element.serialize(into: &bytes, parentNamespace: "")
            case .message(let message):
                message.serialize(into: &bytes, parentNamespace: "")
            case .raw(let text):
                bytes.append(contentsOf: text.utf8)
            case .close:
                XMLElement("close", namespace: Self.framingNamespace).serialize(into: &bytes, parentNamespace: "")
            }
        }
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: message)
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    /// `<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' to='DOMAIN' version='1.0'/>`.
    static func openElement(to domain: String, from: String? = nil) -> XMLElement {
        guard let from else { return XMLElement("open", namespace: framingNamespace, attributes: ["to": domain, "version": "1.0"]) }
        return XMLElement("open", namespace: framingNamespace, attributes: ["to": domain, "from": from, "version": "1.0"])
    }
}
