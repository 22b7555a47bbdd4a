import NIOCore
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
        /// The TLS handshake completed.
        case tlsEstablished(ProbeReport.TLSFacts)
        /// The connection failed or was closed: the typed kind and what a person needs.
        case failed(kind: String, detail: String)
    }

    let event: Event
    let at: NIODeadline
}

/// The top of the probe's pipeline (`[TLS] → XMPPStreamCodec → ProbeChannelHandler`):
/// queues what the connection reports, in order, for the probe driver, which reads it one arrival at
/// a time (`next(within:)`) and writes through `send(_:)` — a sequential conversation instead of the
/// run's event-driven session. Loop-bound: every method runs on the channel's loop (the driver
/// reaches it through `NIOLoopBound`).
final class ProbeChannelHandler: ChannelInboundHandler {
    typealias InboundIn = XMPPStreamEvent
    typealias OutboundOut = XMPPStreamOutput

    private let codec: XMPPStreamCodec
    private let tls: ProbeTLS?
    private var context: ChannelHandlerContext?
    /// The channel's loop, kept after the handler is removed (a closed channel drops its handlers).
    private var loop: (any EventLoop)?
    private var queue: [ProbeArrival] = []
    private var head = 0
    private var waiter: (promise: EventLoopPromise<ProbeArrival?>, timer: Scheduled<Void>)?
    private var ended = false

    init(codec: XMPPStreamCodec, tls: ProbeTLS?) {
        self.codec = codec
        self.tls = tls
    }

    /// The pipeline of a probe connection, bottom to top (TLS is added when the login machine asks,
    /// for `direct` before the stream opens).
    static func pipeline(tls: ProbeTLS?) -> (handlers: [any ChannelHandler], probe: ProbeChannelHandler) {
        let codec = XMPPStreamCodec(parser: StanzaParser(), scratch: OutboundScratch())
        let probe = ProbeChannelHandler(codec: codec, tls: tls)
        return ([codec, probe], probe)
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

    /// Adds TLS at the bottom of the pipeline; the handshake starts at once.
    func startTLS() throws {
        guard let context, let tls else { throw SessionError.tlsUnavailable }
        try context.pipeline.syncOperations.addHandlers(tls.makeHandlers(), position: .first)
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
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event, let tls,
            let handler = try? context.pipeline.syncOperations.handler(type: OpenSSLClientHandler.self)
        {
            deliver(.tlsEstablished(tls.facts(handler: handler)))
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
        case let error as OpenSSLError:
            deliver(.failed(kind: ConnectionFailure(error).kind, detail: Self.handshakeFailure(error)))
        default:
            deliver(.failed(kind: ConnectionFailure(error).kind, detail: "\(error)"))
        }
        context.close(promise: nil)
    }
}

extension ProbeChannelHandler {
    /// What a person reads about a failed TLS connection: for a certificate, "the server's
    /// certificate did not verify: self-signed"; otherwise "the TLS handshake failed: wrong version
    /// number", OpenSSL's reasons without their "error:0A00010B:SSL routines::" prefixes.
    static func handshakeFailure(_ error: OpenSSLError) -> String {
        if let problem = error.problem { return "the server's certificate did not verify: \(problem.rawValue)" }
        let reasons = error.reason.split(separator: ";").map { part -> Substring in
            let reason = part.split(separator: ":", omittingEmptySubsequences: false).last ?? part
            return reason.drop { $0 == " " }
        }
        let text = reasons.filter { !$0.isEmpty }.joined(separator: "; ")
        switch error.kind {
        case .unexpectedEOF: return "the server closed the connection during the TLS handshake"
        case .record: return "a TLS record failed: \(text)"
        default: return "the TLS handshake failed: \(text.isEmpty ? error.reason : text)"
        }
    }
}
