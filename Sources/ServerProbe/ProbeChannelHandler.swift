import LoadEngine
import NIOCore
import NIOSSL
import NIOTLS
import SessionCore
import XMPPCore

/// One thing the probe's connection reported, with the monotonic instant it arrived on the loop.
struct ProbeArrival: Sendable {
    enum Event: Sendable {
        /// The server's stream header.
        case opened
        /// A depth-1 element.
        case element(XMLElement)
        /// The server's `</stream:stream>`.
        case closed
        /// The TLS handshake completed: what the probe reports, and the connection's channel-binding data.
        case tlsEstablished(ProbeReport.TLSFacts, ChannelBindingData)
        /// The connection failed or was closed: the typed kind and what a person needs.
        case failed(kind: String, detail: String)
    }

    let event: Event
    let at: NIODeadline
}

/// The top of the probe's pipeline (`WireByteCounter → [TLS] → XMPPStreamCodec → ProbeChannelHandler`):
/// queues what the connection reports, in order, for the probe driver, which reads it one arrival at
/// a time (`next(within:)`) and writes through `send(_:)` — a sequential conversation instead of the
/// run's event-driven session. Loop-bound: every method runs on the channel's loop (the driver
/// reaches it through `NIOLoopBound`).
final class ProbeChannelHandler: ChannelInboundHandler {
    typealias InboundIn = XMPPStreamEvent
    typealias OutboundOut = XMPPStreamOutput

    private let codec: XMPPStreamCodec
    private let byteCounter: WireByteCounter
    private let tls: ProbeTLS?
    private var verdict: ProbeTLS.ObservedVerdict?
    private var context: ChannelHandlerContext?
    /// The channel's loop, kept after the handler is removed (a closed channel drops its handlers).
    private var loop: (any EventLoop)?
    private var queue: [ProbeArrival] = []
    private var head = 0
    private var waiter: (promise: EventLoopPromise<ProbeArrival?>, timer: Scheduled<Void>)?
    private var ended = false

    init(codec: XMPPStreamCodec, byteCounter: WireByteCounter, tls: ProbeTLS?) {
        self.codec = codec
        self.byteCounter = byteCounter
        self.tls = tls
    }

    /// The pipeline of a probe connection, bottom to top (TLS is added when the login machine asks,
    /// for `direct` before the stream opens).
    static func pipeline(tls: ProbeTLS?) -> (handlers: [any ChannelHandler], probe: ProbeChannelHandler) {
        let counter = WireByteCounter(sink: DiscardedByteCounts())
        let codec = XMPPStreamCodec(parser: StanzaParser(), scratch: OutboundScratch())
        let probe = ProbeChannelHandler(codec: codec, byteCounter: counter, tls: tls)
        return ([counter, codec, probe], probe)
    }

    // MARK: - For the driver

    /// The next arrival, or nil when none came within `timeout`.
    func next(within timeout: TimeAmount) -> EventLoopFuture<ProbeArrival?> {
        guard let loop else { preconditionFailure("probe handler used before it was added") }
        if head < queue.count {
            let arrival: ProbeArrival? = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return loop.makeSucceededFuture(arrival)
        }
        if ended || context == nil { return loop.makeSucceededFuture(nil) }
        let promise = loop.makePromise(of: ProbeArrival?.self)
        let timer = loop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            waiter = nil
            promise.succeed(nil)
        }
        waiter = (promise, timer)
        return promise.futureResult
    }

    func send(_ output: XMPPStreamOutput) {
        context?.writeAndFlush(wrapOutboundOut(output), promise: nil)
    }

    /// The next unit from the server is a new stream header.
    func restartStream() { codec.restart() }

    /// Adds TLS right above the byte counter; the handshake starts at once.
    func startTLS() throws {
        guard let context, let tls else { throw SessionError.tlsUnavailable }
        byteCounter.capture = []
        let made = try tls.makeHandlers()
        verdict = made.verdict
        try context.pipeline.syncOperations.addHandlers(made.handlers, position: .after(byteCounter))
    }

    func close() {
        context?.close(promise: nil)
    }

    // MARK: - Channel events

    private func deliver(_ event: ProbeArrival.Event) {
        let arrival = ProbeArrival(event: event, at: .now())
        if let waiter {
            self.waiter = nil
            waiter.timer.cancel()
            waiter.promise.succeed(arrival)
        } else {
            queue.append(arrival)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        loop = context.eventLoop
    }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .opened: deliver(.opened)
        case .element(let element): deliver(.element(element))
        case .closed: deliver(.closed)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event, let tls, let verdict,
            let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        {
            let captured = byteCounter.capture ?? []
            byteCounter.capture = nil
            let facts = tls.facts(handler: handler, serverHello: captured, verdict: verdict)
            deliver(.tlsEstablished(facts, tls.channelBindingData(in: context.pipeline.syncOperations)))
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !ended { deliver(.failed(kind: "closed", detail: "the server closed the connection")) }
        ended = true
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !ended else { return }
        ended = true
        switch error {
        case let error as XMPPStreamError:
            deliver(.failed(kind: error.kind, detail: error.description))
        case let error as SessionError:
            deliver(.failed(kind: error.kind, detail: error.description))
        case let error as TLSSetup.CertificateError:
            deliver(.failed(kind: ConnectionFailure(error).kind, detail: "the server's certificate did not verify: \(error.problem.rawValue)"))
        case is NIOSSLError, is BoringSSLError:
            deliver(.failed(kind: ConnectionFailure(error).kind, detail: Self.handshakeFailure(error)))
        default:
            deliver(.failed(kind: ConnectionFailure(error).kind, detail: "\(error)"))
        }
        context.close(promise: nil)
    }
}

extension ProbeChannelHandler {
    /// "the TLS handshake failed: WRONG_VERSION_NUMBER" — BoringSSL's reason code without the
    /// source paths its errors print.
    static func handshakeFailure(_ error: any Error) -> String {
        let text = "\(error)"
        guard let marker = text.range(of: "OPENSSL_internal:") else { return "the TLS handshake failed: \(text)" }
        let reason = text[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return "the TLS handshake failed: \(reason)"
    }
}

/// The probe counts no bytes: `WireByteCounter` is there for its ServerHello capture.
final class DiscardedByteCounts: ByteCountSink {
    func received(_ byteCount: Int) {}
    func sent(_ byteCount: Int) {}
}
