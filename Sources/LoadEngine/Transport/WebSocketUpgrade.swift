import NIOCore
import NIOHTTP1
import NIOWebSocket

// The HTTP/1.1 upgrade that turns a new connection into an XMPP-over-WebSocket one (RFC 7395).

/// Adds the HTTP/1.1 client handlers, `NIOHTTPClientUpgradeHandler` with NIO's WebSocket upgrader
/// (frames bounded by the caller's `maxMessageBytes`) and `WebSocketUpgradeWatcher` (sends the
/// upgrade request, reports a failed upgrade) to a connection; once the server answered 101 with the
/// `xmpp` subprotocol, the watcher leaves and `NIOWebSocketFrameAggregator` joins the frame handlers,
/// then the caller adds what reads the messages (`SessionPipeline`). Loop-bound, like the channel.
enum WebSocketUpgrade {
    /// Adds the HTTP client handlers, the upgrader and the watcher to `channel` (above whatever is
    /// there: the byte counter, TLS); `requestKey` is the `Sec-WebSocket-Key` (random; fixed in tests). `report` hears how the upgrade ended (once); on success,
    /// `upgraded` then adds what reads the messages, above the frame handlers and the aggregator.
    static func addPipeline(
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
