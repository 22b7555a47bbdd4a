import NIOCore
import SessionCore
import XMPPCore

/// One unit of the server's XML stream, as the codec decodes it: exactly one event per depth-1 unit,
/// however the bytes were chunked.
package enum XMPPStreamEvent {
    /// The server's stream header (again after each restart).
    case opened(StreamHeader)
    /// A complete depth-1 element (stanza, features, SASL, …), parsed in the header's namespaces.
    case element(XMLElement)
    /// The server's `</stream:stream>`.
    case closed
}

/// What the session writes through the codec.
package enum XMPPStreamOutput {
    /// Our stream header, addressed to `domain`, from `from` (the user's bare JID where the login
    /// may use SASL2: `LoginMachine.streamHeaderFrom`; nil: no `from`).
    case header(domain: String, from: String? = nil)
    /// One element, serialized in the `jabber:client` default namespace.
    case element(XMLElement)
    /// A stamped chat message, written straight from the value.
    case message(StampedMessage)
    /// Text written as is (a profile's `raw` step).
    case raw(String)
    /// `</stream:stream>`.
    case close
}

/// The XMPP stream codec over a byte transport (TCP or TLS over TCP): in, bytes → `XMPPStreamEvent`s;
/// out, `XMPPStreamOutput` → bytes. The session above it never sees bytes, so another transport
/// (WebSocket, BOSH) is another codec under the same session handler.
///
/// Decoding: the connection's own `XMLStreamFramer` (a few words of state plus an *incomplete*
/// element's bytes) finds unit boundaries; the event loop's shared `StanzaParser` parses each complete
/// unit (one libxml2 context per loop, not per session — see docs/ARCHITECTURE.md); elements written
/// are serialized into the loop's `OutboundScratch`, so a write allocates just its buffer. Malformed or
/// oversized input is fired as `XMPPStreamError`; an element before any header as
/// `SessionError.noStreamHeader`. After either, the rest of the read is dropped.
///
/// `restart()` (after STARTTLS `<proceed/>` and SASL `<success/>`) makes the next unit a new header.
/// Loop-bound: one instance per channel, used only on its loop.
package final class XMPPStreamCodec: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = XMPPStreamEvent
    package typealias OutboundIn = XMPPStreamOutput
    package typealias OutboundOut = ByteBuffer

    private let parser: StanzaParser
    private let scratch: OutboundScratch
    private var framer: XMLStreamFramer
    /// The current stream header's namespace declarations (nil before it, and after a restart): all the
    /// elements need of it, and 8 bytes per connection where the whole header would be ~100.
    private var namespaces: [XMLNamespaceDeclaration]?
    private var failed = false
    /// This codec wrote since the last flush (its last buffer is still queued).
    private var unflushed = false
    /// The session handler above, called directly with each event instead of through the pipeline:
    /// a `channelRead` boxes the event in an `NIOAny` (an element is larger than its inline storage),
    /// one allocation per stanza. Held while both are in the pipeline; each side lets go when removed.
    /// Nil (the probe's pipeline): events are fired up the pipeline.
    var receiver: SessionChannelHandler?
    private var context: ChannelHandlerContext?

    /// `parser` and `scratch` are the event loop's, shared by its connections.
    package init(parser: StanzaParser, scratch: OutboundScratch) {
        self.parser = parser
        self.scratch = scratch
        self.framer = XMLStreamFramer(limits: parser.limits)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        receiver = nil
    }

    /// The next unit the server sends must be a new stream header.
    package func restart() {
        framer.restart()
        namespaces = nil
    }

    // MARK: - Inbound

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { framer.append($0) }
        while !failed {
            // Each unit is parsed from the framer's own bytes (lent, not copied), and passed on only
            // once the framer is done with it: a handler may restart the stream on what it receives.
            let inbound: Inbound?
            do {
                inbound = try framer.next { unit throws(XMPPStreamError) -> Inbound in
                    switch unit {
                    case .streamOpen(let bytes):
                        return .opened(try parser.parseHeader(Array(bytes)))
                    case .element(let bytes):
                        guard let namespaces else { return .elementBeforeHeader }
                        return .element(try parser.parseElement(bytes, inScopeOf: namespaces))
                    case .streamClose:
                        return .closed
                    }
                }
            } catch {
                return fail(context: context, error)
            }
            switch inbound {
            case nil:
                return
            case .opened(let header):
                namespaces = header.namespaces
                deliver(.opened(header), context: context)
            case .element(let element):
                deliver(.element(element), context: context)
            case .closed:
                deliver(.closed, context: context)
            case .elementBeforeHeader:
                return fail(context: context, SessionError.noStreamHeader)
            }
        }
    }

    private func deliver(_ event: XMPPStreamEvent, context: ChannelHandlerContext) {
        if let receiver {
            receiver.received(event)
        } else {
            context.fireChannelRead(wrapInboundOut(event))
        }
    }

    /// What one framed unit became.
    private enum Inbound {
        case opened(StreamHeader)
        case element(XMLElement)
        case closed
        case elementBeforeHeader
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        failed = true
        context.fireErrorCaught(error)
    }

    // MARK: - Outbound

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let held = !context.channel.isWritable
        context.write(wrapOutboundOut(encode(unwrapOutboundIn(data), allocator: context.channel.allocator, held: held)), promise: promise)
    }

    /// `output` written below this codec, straight from the session handler above (no `NIOAny` box).
    /// A write that follows an unflushed one (the answers to one read), or on a channel that does not
    /// drain, waits in NIO's queue: its buffer is sized to the unit (`OutboundScratch`, `held`); the
    /// first of a read's answers may still reuse the loop's buffer.
    package func write(_ output: XMPPStreamOutput, flush: Bool) {
        guard let context else { return }
        let held = unflushed || !context.channel.isWritable
        let buffer = wrapOutboundOut(encode(output, allocator: context.channel.allocator, held: held))
        if flush {
            unflushed = false
            context.writeAndFlush(buffer, promise: nil)
        } else {
            unflushed = true
            context.write(buffer, promise: nil)
        }
    }

    package func flush(context: ChannelHandlerContext) {
        unflushed = false
        context.flush()
    }

    private func encode(_ output: XMPPStreamOutput, allocator: ByteBufferAllocator, held: Bool) -> ByteBuffer {
        scratch.encode(allocator: allocator, held: held) { bytes in
            switch output {
            case .header(let domain, let from): Stanza.appendStreamHeader(to: domain, from: from, into: &bytes)
            case .element(let element): element.serialize(into: &bytes, parentNamespace: XMPPNamespace.client)
            case .message(let message): message.serialize(into: &bytes, parentNamespace: XMPPNamespace.client)
            case .raw(let text): bytes += text.utf8
            case .close: bytes += Stanza.streamClose
            }
        }
    }
}
