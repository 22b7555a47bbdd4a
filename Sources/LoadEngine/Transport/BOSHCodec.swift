import NIOCore
import NIOHTTP1
import SessionCore
import XMPPCore

/// The XMPP stream codec over BOSH (XEP-0124/0206), under the same `SessionChannelHandler` as TCP's
/// `XMPPStreamCodec`: it sits on the session's first HTTP/1.1 connection (slot 0) and owns a second
/// one (slot 1, opened on first need through `openSecondary`), since a long poll holds a connection.
///
/// Out: `.header` is the session creation request (or, once the session exists, the restart after
/// SASL success); `.element`/`.raw` are queued and leave together in the next request at the flush
/// (each stanza declaring `jabber:client`); `.close` is `type='terminate'`. In: each response body's
/// children become `.element`s, in `rid` order; the creation and restart responses stand for
/// `.opened`; a `type='terminate'` response is `.closed` (or `bosh-<condition>` when the server ended
/// the session with a condition); any status but 200 is `http-<status>`; a body that is not BOSH's is
/// `web-protocol-error`. When to send is `BOSHRequestScheduler`'s decision (one long poll always
/// outstanding once the session exists). Every request and response is reported to `measure` (HTTP
/// counters, `bosh.request`/`bosh.poll` round trips). When either connection closes, both close
/// and the session sees its connection lost. Loop-bound.
///
/// The close: the server answers a terminate and every other request it holds (XEP-0124 §13), so
/// `.closed` waits until every request has been answered (`BOSHRequestScheduler.isDrained`), and
/// only then may the session close the connections: a clean logout ends with as many responses as
/// requests. A response still missing `drainTimeout` after the terminate body, or when a connection
/// closes while the session is ending (also after its own logout timeout), is given up and reported
/// as `.unanswered` (counted as the error kind `bosh-unanswered`), then `.closed` follows. So after
/// a logout, `http_requests == http_responses + bosh-unanswered`.
final class BOSHCodec: ChannelDuplexHandler, StreamRestarting {
    typealias InboundIn = NIOHTTPClientResponseFull
    typealias InboundOut = XMPPStreamEvent
    typealias OutboundIn = XMPPStreamOutput
    typealias OutboundOut = HTTPClientRequestPart

    /// What the codec reports for the transport's measures.
    enum Measure {
        /// A request is on the wire (its last part written to the socket; over TLS, after the
        /// handshake): a connection that failed before sent no request.
        case requestSent
        /// A response `nanoseconds` after its request; `poll`: the request carried nothing.
        case responseReceived(nanoseconds: UInt64, poll: Bool)
        /// A request's response did not come: still missing `drainTimeout` after the terminate
        /// body, or when a connection closed while the session was ending.
        case unanswered
    }

    /// The error kind a request unanswered at the session's end is counted as.
    static let unansweredKind = "bosh-unanswered"

    private let parser: StanzaParser
    private let host: String
    private let path: String
    private var scheduler: BOSHRequestScheduler
    private let openSecondary: (BOSHCodec) -> Void
    private let measure: (Measure) -> Void
    private var context: ChannelHandlerContext?
    private var secondary: BOSHSecondaryHandler?
    private var secondaryOpening = false
    /// Requests for slot 1 written before its connection was ready.
    private var secondaryBacklog: [BOSHRequestScheduler.Request] = []
    /// Send time and kind per outstanding rid.
    private var sent: [UInt64: (at: NIODeadline, poll: Bool)] = [:]
    /// rids whose responses stand for a stream (re)open: creation and restart.
    private var opening: Set<UInt64> = []
    private var failed = false
    /// A flush is scheduled for the end of this loop iteration.
    private var flushScheduled = false
    /// How long the close waits, after the terminate body, for the other requests' responses.
    private let drainTimeout: TimeAmount
    /// Gives up on the missing responses when the drain bound passes.
    private var drainTimer: Scheduled<Void>?
    /// `.closed` went up: the codec is done; later responses are ignored.
    private var closedSent = false

    /// `openSecondary` must open a connection to the same endpoint and call `secondaryReady(_:)` (or
    /// `secondaryFailed`) on this codec, on its loop.
    init(
        parser: StanzaParser, host: String, port: Int, path: String, domain: String, wait: Int = 60,
        firstRID: UInt64 = UInt64.random(in: 1...(1 << 40)), drainTimeout: TimeAmount = .seconds(2),
        openSecondary: @escaping (BOSHCodec) -> Void, measure: @escaping (Measure) -> Void
    ) {
        self.parser = parser
        self.host = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        self.path = path
        scheduler = BOSHRequestScheduler(domain: domain, wait: wait, firstRID: firstRID)
        self.drainTimeout = drainTimeout
        self.openSecondary = openSecondary
        self.measure = measure
    }

    /// Nothing to reset: the next `.header` becomes the restart request.
    func restart() {}

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        drainTimer?.cancel()
        drainTimer = nil
        self.context = nil
    }

    // MARK: - Outbound (from the session)

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .header:
            let requests = scheduler.open()
            send(requests)
        case .element(let element):
            var bytes: [UInt8] = []
            element.serialize(into: &bytes, parentNamespace: "")
            scheduler.enqueue(bytes)
        case .message(let message):
            var bytes: [UInt8] = []
            message.serialize(into: &bytes, parentNamespace: "")
            scheduler.enqueue(bytes)
        case .raw(let text):
            scheduler.enqueue(Array(text.utf8))
        case .close:
            send(scheduler.close())
        }
        promise?.succeed(())
    }

    /// Sends what the session wrote once its current burst of writes is over (later in this loop
    /// iteration): stanzas written one after the other outside a read (a logout's presence and
    /// terminate) then share one request instead of taking both connections.
    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.send(self.scheduler.flush())
        }
    }

    private func send(_ requests: [BOSHRequestScheduler.Request]) {
        guard let context else { return }
        for request in requests {
            sent[request.rid] = (context.eventLoop.now, request.isPoll)
            if request.opensStream { opening.insert(request.rid) }
            if request.slot == 0 {
                let parts = parts(of: request, allocator: context.channel.allocator)
                for (index, part) in parts.enumerated() {
                    context.write(wrapOutboundOut(part), promise: index == parts.count - 1 ? requestWritten(on: context.eventLoop) : nil)
                }
                context.flush()
            } else if let secondary {
                secondary.send(parts(of: request, allocator: context.channel.allocator), written: requestWritten(on: context.eventLoop))
            } else {
                secondaryBacklog.append(request)
                if !secondaryOpening {
                    secondaryOpening = true
                    openSecondary(self)
                }
            }
        }
    }

    /// The promise of a request's last part: it counts the request as sent once that is written.
    private func requestWritten(on eventLoop: any EventLoop) -> EventLoopPromise<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenSuccess { [measure] in measure(.requestSent) }
        return promise
    }

    private func parts(of request: BOSHRequestScheduler.Request, allocator: ByteBufferAllocator) -> [HTTPClientRequestPart] {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Type", value: "text/xml; charset=utf-8")
        headers.add(name: "Content-Length", value: String(request.body.count))
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
        return [.head(head), .body(.byteBuffer(allocator.buffer(bytes: request.body))), .end(nil)]
    }

    // MARK: - The second connection

    /// The second connection is up: send what waited for it.
    func secondaryReady(_ handler: BOSHSecondaryHandler) {
        secondaryOpening = false
        guard let context, !failed else { return handler.close() }
        secondary = handler
        let backlog = secondaryBacklog
        secondaryBacklog = []
        for request in backlog {
            handler.send(parts(of: request, allocator: context.channel.allocator), written: requestWritten(on: context.eventLoop))
        }
    }

    /// The second connection could not be opened, or closed: the session's connection is lost.
    func secondaryFailed(_ failure: ConnectionFailure) {
        secondaryOpening = false
        secondary = nil
        guard let context, !failed, !closedSent else { return }
        if scheduler.terminated && scheduler.outstanding == 0 { return }
        // The session is ending: what this connection still owed will not come.
        if scheduler.ended || scheduler.closing {
            giveUpDrain(context: context)
            return context.fireChannelReadComplete()
        }
        failed = true
        context.fireErrorCaught(SessionError.connection(failure))
        context.close(promise: nil)
    }

    /// A response on the second connection.
    func secondaryRead(_ response: NIOHTTPClientResponseFull) {
        guard let context else { return }
        received(response, slot: 1, context: context)
        context.fireChannelReadComplete()
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received(unwrapInboundIn(data), slot: 0, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if (scheduler.ended || scheduler.closing) && !closedSent && !failed { giveUpDrain(context: context) }
        drainTimer?.cancel()
        drainTimer = nil
        secondary?.close()
        secondary = nil
        context.fireChannelInactive()
    }

    private func received(_ response: NIOHTTPClientResponseFull, slot: Int, context: ChannelHandlerContext) {
        guard !failed, !closedSent else { return }
        guard response.head.status == .ok else {
            return fail(context: context, SessionError.connection(.httpStatus(Int(response.head.status.code))))
        }
        let parsed: BOSHBody.Response
        do {
            guard let body = response.body else { throw SessionError.connection(.webProtocol) }
            parsed = try body.withUnsafeReadableBytes { try BOSHBody.response($0, parser: parser) }
        } catch {
            return fail(context: context, error)
        }
        let (answered, deliver) = scheduler.responded(slot: slot, parsed)
        guard let answered else {
            return fail(context: context, SessionError.connection(.webProtocol))
        }
        if let request = sent.removeValue(forKey: answered) {
            let nanos = UInt64(max(0, (context.eventLoop.now - request.at).nanoseconds))
            measure(.responseReceived(nanoseconds: nanos, poll: request.poll))
        }
        guard deliverAll(deliver, context: context) else { return }
        // A terminate body, even one still waiting behind an unanswered rid, starts the drain bound.
        if scheduler.ended || parsed.terminated {
            return closeWhenDrained(context: context)
        }
        send(scheduler.flush())
    }

    /// Passes the delivered bodies' contents up, in rid order; false when one ended the session with
    /// a condition the session did not ask for (then it failed).
    private func deliverAll(_ deliver: [BOSHRequestScheduler.Delivery], context: ChannelHandlerContext) -> Bool {
        for body in deliver {
            if opening.remove(body.rid) != nil {
                context.fireChannelRead(wrapInboundOut(.opened(StreamHeader(id: body.response.sid))))
            }
            for element in body.response.elements {
                context.fireChannelRead(wrapInboundOut(.element(element)))
            }
            if body.response.terminated, let condition = body.response.condition, !scheduler.closing {
                fail(context: context, SessionError.connection(.boshTerminated(condition: condition)))
                return false
            }
        }
        return true
    }

    /// The session ended (or a terminate body arrived): `.closed` once every request is answered and
    /// delivered, else when the drain bound passes.
    private func closeWhenDrained(context: ChannelHandlerContext) {
        guard scheduler.isDrained else {
            if drainTimer == nil {
                drainTimer = context.eventLoop.assumeIsolated().scheduleTask(in: drainTimeout) {
                    self.drainTimer = nil
                    guard let context = self.context, !self.failed, !self.closedSent else { return }
                    self.giveUpDrain(context: context)
                    context.fireChannelReadComplete()
                }
            }
            return
        }
        drainTimer?.cancel()
        drainTimer = nil
        closedSent = true
        context.fireChannelRead(wrapInboundOut(.closed))
    }

    /// Counts the responses still missing at the end as unanswered, passes up what waited behind
    /// them, then `.closed`. At the drain bound, or when a connection closes while the session is
    /// ending (terminated, or its terminate sent: after the session's own logout timeout too).
    private func giveUpDrain(context: ChannelHandlerContext) {
        let (unanswered, deliver) = scheduler.abandonOutstanding()
        for rid in unanswered {
            sent.removeValue(forKey: rid)
            measure(.unanswered)
        }
        guard deliverAll(deliver, context: context) else { return }
        drainTimer?.cancel()
        drainTimer = nil
        closedSent = true
        context.fireChannelRead(wrapInboundOut(.closed))
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        failed = true
        context.fireErrorCaught(error)
    }
}
