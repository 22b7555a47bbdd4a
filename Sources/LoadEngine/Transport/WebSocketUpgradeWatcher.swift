import NIOCore
import NIOHTTP1
import SessionCore

/// The top of a WebSocket connection's pipeline until the upgrade completed: sends the upgrade
/// request (`GET path`, `Host`, `Sec-WebSocket-Protocol: xmpp`; NIO's upgrader adds the WebSocket
/// headers) when the channel becomes active, and reports how the upgrade ended, exactly once:
/// `.upgraded(nanoseconds:)` from the request's write to the 101 response, or `.failed` with a typed
/// `ConnectionFailure` — `http-<status>` for any other response, `ws-upgrade-refused` for a 101
/// without the `xmpp` subprotocol or a bad accept key, `connection-closed` (or the channel's error) when
/// the connection ended first. On failure it closes the channel. The connector removes it once the
/// upgrade succeeded. Loop-bound.
final class WebSocketUpgradeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// How an upgrade ended.
    enum Outcome {
        case upgraded(nanoseconds: UInt64)
        /// `requestWritten`: the upgrade request reached the wire (over TLS: the handshake
        /// completed), counted as one; `answered`: the server sent an HTTP response (counted as one).
        case failed(ConnectionFailure, requestWritten: Bool, answered: Bool)
    }

    private let host: String
    private let port: Int
    private let path: String
    private let report: (Outcome) -> Void
    private var requestSentAt: NIODeadline?
    /// The request's last part was written to the socket.
    private var requestWritten = false
    private var reported = false

    init(host: String, port: Int, path: String, report: @escaping (Outcome) -> Void) {
        self.host = host
        self.port = port
        self.path = path
        self.report = report
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context: context)
        context.fireChannelActive()
    }

    private func sendRequest(context: ChannelHandlerContext) {
        guard requestSentAt == nil else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        headers.add(name: "Sec-WebSocket-Protocol", value: "xmpp")
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        requestSentAt = context.eventLoop.now
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenSuccess { self.requestWritten = true }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    /// Called by the upgrader once the server accepted (101, `xmpp` subprotocol).
    func upgradeSucceeded(now: NIODeadline) {
        let started = requestSentAt ?? now
        finish(.upgraded(nanoseconds: UInt64(max(0, (now - started).nanoseconds))))
    }

    /// Called by the upgrader when a 101 response is not acceptable.
    func upgradeRefused() {
        finish(.failed(.webSocketUpgrade, requestWritten: true, answered: true))
    }

    /// The upgrade did not happen: the server answered with an ordinary HTTP response.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let response) = unwrapInboundIn(data) {
            let status = Int(response.status.code)
            finish(.failed(status == 101 ? .webSocketUpgrade : .httpStatus(status), requestWritten: true, answered: true))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTPClientUpgradeError {
            finish(.failed(.webSocketUpgrade, requestWritten: true, answered: true))
        } else {
            finish(.failed(ConnectionFailure(error), requestWritten: requestWritten, answered: false))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failed(.closed, requestWritten: requestWritten, answered: false))
        context.fireChannelInactive()
    }

    private func finish(_ outcome: Outcome) {
        guard !reported else { return }
        reported = true
        report(outcome)
    }
}
