import LoadProfile
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SessionCore
import XMPPCore

/// Opens XMPP-over-WebSocket connections (RFC 7395) for one event loop's virtual users, with one
/// reusable `ClientBootstrap` per source address, as `SessionConnector` does for TCP.
///
/// A new channel's pipeline, bottom to top: `WireByteCounter` (bytes on the wire, HTTP and WebSocket
/// framing and TLS records included) → `NIOSSLClientHandler` for `wss://` (verifying the URL's host;
/// a failed verification is diagnosed as for TCP, `tls-certificate-<problem>`) → NIO's HTTP/1.1 client handlers with
/// `NIOHTTPClientUpgradeHandler` (`NIOWebSocketClientUpgrader`, frames bounded by
/// `XMLLimits.maxElementBytes`) → `WebSocketUpgradeWatcher` (sends the upgrade request, reports a
/// failed upgrade). Once the server answered 101 with the `xmpp` subprotocol, the HTTP handlers and
/// the watcher leave and `NIOWebSocketFrameAggregator` → `XMPPWebSocketCodec` →
/// `SessionChannelHandler` join the frame handlers: only then does the session hear that it is
/// connected, so `login.connect` spans TCP connect and upgrade, and `login.ws_upgrade` the upgrade
/// alone. Loop-bound.
final class WebSocketConnector {
    private unowned let context: LoopContext
    private lazy var bootstraps = LoopBootstraps(context: context, initializer: channelInitializer())
    private var connecting: (user: VirtualUser, endpoint: WeightedEndpoint)?

    init(context: LoopContext) {
        self.context = context
    }

    /// Connects `user` to `endpoint` (a `webSocket` endpoint whose address is `address`).
    func connect(_ user: VirtualUser, to endpoint: WeightedEndpoint, at address: SocketAddress) {
        let bound = NIOLoopBound(user, eventLoop: context.eventLoop)
        connecting = (user, endpoint)
        context.recorder.increment(.connectionsWebSocket)
        bootstraps.next().connect(to: address).whenFailure { error in
            bound.value.connectFailed(ConnectionFailure(error))
        }
        connecting = nil
    }

    /// Installs the WebSocket pipeline for the user being connected (`connecting`).
    private func channelInitializer() -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return { channel in
            let connector = bound.value
            guard let (user, endpoint) = connector.connecting else {
                return channel.eventLoop.makeFailedFuture(SessionError.connection(.bootstrapWithoutSession))
            }
            connector.connecting = nil
            return channel.eventLoop.makeCompletedFuture {
                try Self.install(on: channel, for: user, endpoint: endpoint, context: connector.context)
            }
        }
    }

    /// Builds a new connection's pipeline for `user` on `channel` (before or after it connected).
    static func install(
        on channel: any Channel, for user: VirtualUser, endpoint: WeightedEndpoint, context: LoopContext,
        requestKey: String = NIOWebSocketClientUpgrader.randomRequestKey()
    ) throws {
        let operations = channel.pipeline.syncOperations
        let counter = WireByteCounter(sink: context)
        try operations.addHandler(counter)
        if endpoint.transport.isSecure {
            guard let tls = context.environment.tls else { throw SessionError.tlsUnavailable }
            try operations.addHandlers(try tls.makeHandlers(httpHost: endpoint.host))
        }
        let loop = context
        let parser = context.parser
        try Self.addUpgradePipeline(
            to: channel, host: endpoint.host, port: endpoint.port, path: endpoint.transport.path,
            maxMessageBytes: parser.limits.maxElementBytes, requestKey: requestKey,
            report: { outcome in
                switch outcome {
                case .upgraded(let nanoseconds):
                    loop.recorder.increment(.httpRequests)
                    loop.recorder.increment(.httpResponses)
                    let metric = loop.environment.transportMetrics.webSocketUpgrade
                    loop.recorder.recordLatency(metric, correctedNanoseconds: nanoseconds, serviceNanoseconds: nanoseconds)
                case .failed(let failure, let requestWritten, let answered):
                    if requestWritten { loop.recorder.increment(.httpRequests) }
                    if answered { loop.recorder.increment(.httpResponses) }
                    user.connectFailed(failure)
                }
            },
            upgraded: { channel in
                let codec = XMPPWebSocketCodec(parser: parser, scratch: loop.outboundScratch)
                try channel.pipeline.syncOperations.addHandlers(
                    codec, SessionChannelHandler(user: user, codec: codec, byteCounter: counter))
            })
    }

    /// Adds the HTTP client handlers, the upgrader and the watcher to `channel` (above whatever is
    /// there: the byte counter, TLS); `requestKey` is the `Sec-WebSocket-Key` (random; fixed in tests). `report` hears how the upgrade ended (once); on success,
    /// `upgraded` then adds what reads the messages, above the frame handlers and the aggregator.
    static func addUpgradePipeline(
        to channel: any Channel, host: String, port: Int, path: String, maxMessageBytes: Int,
        requestKey: String = NIOWebSocketClientUpgrader.randomRequestKey(),
        report: @escaping (WebSocketUpgradeWatcher.Outcome) -> Void,
        upgraded: @escaping (any Channel) throws -> Void
    ) throws {
        let watcher = WebSocketUpgradeWatcher(host: host, port: port, path: path, report: report)
        let loopBound = NIOLoopBound((watcher, upgraded), eventLoop: channel.eventLoop)
        let upgrader = NIOWebSocketClientUpgrader(
            requestKey: requestKey, maxFrameSize: maxMessageBytes, automaticErrorHandling: true
        ) { channel, response in
            channel.eventLoop.makeCompletedFuture {
                let (watcher, upgraded) = loopBound.value
                let accepted = response.headers["Sec-WebSocket-Protocol"].first?.lowercased() == "xmpp"
                guard accepted else {
                    watcher.upgradeRefused()
                    channel.close(promise: nil)
                    return
                }
                let operations = channel.pipeline.syncOperations
                operations.removeHandler(context: try operations.context(handler: watcher), promise: nil)
                try operations.addHandler(
                    NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: maxMessageBytes))
                watcher.upgradeSucceeded(now: channel.eventLoop.now)
                try upgraded(channel)
            }
        }
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try channel.pipeline.syncOperations.addHandler(watcher)
    }
}
