import LoadProfile
import NIOCore
import NIOHTTP1
import NIOWebSocket
import SessionCore
import XMPPCore

// Builds the handler stack of every virtual user's connection, for each transport, in one place.

/// What a new channel of a virtual user carries, and how its pipeline is built.
///
/// Every pipeline starts with a `WireByteCounter` at the bottom (bytes on the wire: TLS records,
/// HTTP headers and WebSocket framing included) and, for a session's connection, ends with the
/// transport's codec under a `SessionChannelHandler`. Between them, per transport:
///
/// - `tcp`: nothing; TLS is inserted above the counter when the login asks (STARTTLS or direct TLS,
///   `SessionChannelHandler.startTLS`). Codec: `XMPPStreamCodec`.
/// - `webSocket` (RFC 7395): TLS for `wss://` (verifying the URL's host; a failed verification is
///   diagnosed as for TCP, `tls-certificate-<problem>`), then NIO's HTTP/1.1 client handlers with the
///   upgrader and `WebSocketUpgradeWatcher` (`WebSocketUpgrade`). Once the server answered 101 with
///   the `xmpp` subprotocol they leave, and the frame aggregator, `XMPPWebSocketCodec` and the session
///   handler join: only then does the session hear it is connected, so `login.connect` spans TCP
///   connect and upgrade, and `login.ws_upgrade` the upgrade alone.
/// - `bosh` (XEP-0124/0206): TLS for `https://`, the HTTP/1.1 client handlers and a response
///   aggregator (bodies bounded by `XMLLimits.maxBufferedBytes`), then `BOSHCodec`. The session
///   hears it is connected when that TCP connection is up. `boshSecondary` is the codec's second
///   connection: the same stack up to the aggregator, then `BOSHSecondaryHandler`.
///
/// A value made on the loop that installs it (it holds loop-bound objects).
enum SessionPipeline {
    /// A session's first connection over `transport`, or a BOSH codec's second connection.
    case session(VirtualUser, Transport)
    case boshSecondary(BOSHCodec, WeightedEndpoint)

    /// The transport of a session's connection.
    enum Transport {
        case tcp
        /// `requestKey`: the `Sec-WebSocket-Key` (random; fixed in tests).
        case webSocket(WeightedEndpoint, requestKey: String)
        /// `openSecondary` opens the codec's second connection when the codec first needs it.
        case bosh(WeightedEndpoint, firstRID: UInt64, openSecondary: (BOSHCodec) -> Void)
    }

    /// Builds this pipeline on `channel` (before or after it connected), bottom to top.
    func install(on channel: any Channel, context: LoopContext) throws {
        let operations = channel.pipeline.syncOperations
        let counter = WireByteCounter(sink: context)
        try operations.addHandler(counter)
        switch self {
        case .session(let user, .tcp):
            let codec = XMPPStreamCodec(parser: context.parser, scratch: context.outboundScratch)
            try Self.addSession(user, codec: codec, counter: counter, to: operations)
        case .session(let user, .webSocket(let endpoint, let requestKey)):
            try Self.addTLS(for: endpoint, context: context, to: operations)
            let parser = context.parser
            try WebSocketUpgrade.addPipeline(
                to: channel, host: endpoint.host, port: endpoint.port, path: endpoint.transport.path,
                maxMessageBytes: parser.limits.maxElementBytes, requestKey: requestKey,
                report: { Self.record($0, for: user, in: context) },
                upgraded: { channel in
                    let codec = XMPPWebSocketCodec(parser: parser, scratch: context.outboundScratch)
                    try Self.addSession(user, codec: codec, counter: counter, to: channel.pipeline.syncOperations)
                })
        case .session(let user, .bosh(let endpoint, let firstRID, let openSecondary)):
            try Self.addHTTP(for: endpoint, context: context, to: operations)
            let codec = BOSHCodec(
                parser: context.parser, host: endpoint.host, port: endpoint.port, path: endpoint.transport.path,
                domain: context.environment.configuration.domain, firstRID: firstRID, openSecondary: openSecondary,
                measure: { Self.record($0, in: context) })
            try Self.addSession(user, codec: codec, counter: counter, to: operations)
        case .boshSecondary(let codec, let endpoint):
            try Self.addHTTP(for: endpoint, context: context, to: operations)
            try operations.addHandler(BOSHSecondaryHandler(codec: codec))
        }
    }

    /// The top of a session's pipeline: the transport's codec under the session's handler.
    private static func addSession<Codec: ChannelHandler & StreamRestarting>(
        _ user: VirtualUser, codec: Codec, counter: WireByteCounter, to operations: ChannelPipeline.SynchronousOperations
    ) throws {
        try operations.addHandlers(codec, SessionChannelHandler(user: user, codec: codec, byteCounter: counter))
    }

    /// TLS from the start for a secure web endpoint (`wss://`, `https://`), verifying its host.
    private static func addTLS(
        for endpoint: WeightedEndpoint, context: LoopContext, to operations: ChannelPipeline.SynchronousOperations
    ) throws {
        guard endpoint.transport.isSecure else { return }
        guard let tls = context.environment.tls else { throw SessionError.tlsUnavailable }
        try operations.addHandlers(try tls.makeHandlers(httpHost: endpoint.host))
    }

    /// TLS for `https://`, the HTTP/1.1 client handlers and the response aggregator (BOSH).
    private static func addHTTP(
        for endpoint: WeightedEndpoint, context: LoopContext, to operations: ChannelPipeline.SynchronousOperations
    ) throws {
        try addTLS(for: endpoint, context: context, to: operations)
        try operations.addHTTPClientHandlers()
        try operations.addHandler(NIOHTTPClientResponseAggregator(maxContentLength: context.parser.limits.maxBufferedBytes))
    }

    /// Counts a WebSocket upgrade's requests and responses and times a successful one
    /// (`login.ws_upgrade`); a failed one fails the user's connect.
    private static func record(_ outcome: WebSocketUpgradeWatcher.Outcome, for user: VirtualUser, in context: LoopContext) {
        switch outcome {
        case .upgraded(let nanoseconds):
            context.recorder.increment(.httpRequests)
            context.recorder.increment(.httpResponses)
            let metric = context.environment.transportMetrics.webSocketUpgrade
            context.recorder.recordLatency(metric, correctedNanoseconds: nanoseconds, serviceNanoseconds: nanoseconds)
        case .failed(let failure, let requestWritten, let answered):
            if requestWritten { context.recorder.increment(.httpRequests) }
            if answered { context.recorder.increment(.httpResponses) }
            user.connectFailed(failure)
        }
    }

    /// Counts BOSH requests and responses, times each response (`bosh.request`, `bosh.poll`) and
    /// counts the requests left unanswered at close.
    private static func record(_ measure: BOSHCodec.Measure, in context: LoopContext) {
        switch measure {
        case .requestSent:
            context.recorder.increment(.httpRequests)
        case .responseReceived(let nanoseconds, let poll):
            context.recorder.increment(.httpResponses)
            let metrics = context.environment.transportMetrics
            context.recorder.recordLatency(
                poll ? metrics.boshPoll : metrics.boshRequest, correctedNanoseconds: nanoseconds, serviceNanoseconds: nanoseconds)
        case .unanswered:
            context.recorder.recordError(kind: BOSHCodec.unansweredKind)
        }
    }
}
