import LoadProfile
import NIOCore
import NIOHTTP1
import NIOPosix
import SessionCore
import XMPPCore

/// Opens BOSH sessions (XEP-0124/0206) for one event loop's virtual users, with one reusable
/// `ClientBootstrap` per source address, as `SessionConnector` does for TCP.
///
/// A session's first connection, bottom to top: `WireByteCounter` (bytes on the wire, HTTP headers
/// and TLS records included) → `NIOSSLClientHandler` for `https://` (verifying the URL's host; a
/// failed verification is diagnosed as for TCP, `tls-certificate-<problem>`) → NIO's HTTP/1.1 client handlers →
/// `NIOHTTPClientResponseAggregator` (bodies bounded by `XMLLimits.maxBufferedBytes`) → `BOSHCodec` →
/// `SessionChannelHandler`. The session hears it is connected when that TCP connection is up (so
/// `login.connect` is the TCP connect; the creation round trip falls in `login.features`, as the
/// stream header's does over TCP). The codec's second connection has the same pipeline up to the
/// aggregator, then `BOSHSecondaryHandler`. Loop-bound.
final class BOSHConnector {
    private enum Connecting {
        case session(VirtualUser, WeightedEndpoint)
        case secondary(BOSHCodec, WeightedEndpoint)
    }

    private unowned let context: LoopContext
    private lazy var bootstraps = LoopBootstraps(context: context, initializer: channelInitializer())
    private var connecting: Connecting?

    init(context: LoopContext) {
        self.context = context
    }

    /// Connects `user` to `endpoint` (a `bosh` endpoint whose address is `address`).
    func connect(_ user: VirtualUser, to endpoint: WeightedEndpoint, at address: SocketAddress) {
        let bound = NIOLoopBound(user, eventLoop: context.eventLoop)
        context.recorder.increment(.connectionsBOSH)
        open(.session(user, endpoint), at: address).whenFailure { error in
            bound.value.connectFailed(ConnectionFailure(error))
        }
    }

    private func openSecondary(for codec: BOSHCodec, endpoint: WeightedEndpoint, at address: SocketAddress) {
        let bound = NIOLoopBound(codec, eventLoop: context.eventLoop)
        open(.secondary(codec, endpoint), at: address).whenFailure { error in
            bound.value.secondaryFailed(ConnectionFailure(error))
        }
    }

    private func open(_ what: Connecting, at address: SocketAddress) -> EventLoopFuture<any Channel> {
        connecting = what
        let future = bootstraps.next().connect(to: address)
        connecting = nil
        return future
    }

    /// Installs a session's first connection's pipeline, or a codec's second connection's.
    private func channelInitializer() -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return { channel in
            let connector = bound.value
            guard let what = connector.connecting else {
                return channel.eventLoop.makeFailedFuture(SessionError.connection(.bootstrapWithoutSession))
            }
            connector.connecting = nil
            return channel.eventLoop.makeCompletedFuture {
                switch what {
                case .session(let user, let endpoint):
                    try Self.install(on: channel, for: user, endpoint: endpoint, context: connector.context) { codec in
                        let address = channel.remoteAddress
                        let connector = bound.value
                        if let address {
                            connector.openSecondary(for: codec, endpoint: endpoint, at: address)
                        } else {
                            codec.secondaryFailed(.closed)
                        }
                    }
                case .secondary(let codec, let endpoint):
                    try Self.addHTTPHandlers(to: channel, endpoint: endpoint, context: connector.context)
                    try channel.pipeline.syncOperations.addHandler(BOSHSecondaryHandler(codec: codec))
                }
            }
        }
    }

    /// Builds a session's first connection's pipeline for `user` on `channel`; `openSecondary` opens
    /// the second connection when the codec first needs it.
    static func install(
        on channel: any Channel, for user: VirtualUser, endpoint: WeightedEndpoint, context: LoopContext,
        firstRID: UInt64 = UInt64.random(in: 1...(1 << 40)), openSecondary: @escaping (BOSHCodec) -> Void
    ) throws {
        let counter = try addHTTPHandlers(to: channel, endpoint: endpoint, context: context)
        let loop = context
        let codec = BOSHCodec(
            parser: context.parser, host: endpoint.host, port: endpoint.port, path: endpoint.transport.path,
            domain: context.environment.configuration.domain, firstRID: firstRID, openSecondary: openSecondary
        ) { measure in
            switch measure {
            case .requestSent:
                loop.recorder.increment(.httpRequests)
            case .responseReceived(let nanoseconds, let poll):
                loop.recorder.increment(.httpResponses)
                let metrics = loop.environment.transportMetrics
                loop.recorder.recordLatency(
                    poll ? metrics.boshPoll : metrics.boshRequest, correctedNanoseconds: nanoseconds, serviceNanoseconds: nanoseconds)
            case .unanswered:
                loop.recorder.recordError(kind: BOSHCodec.unansweredKind)
            }
        }
        try channel.pipeline.syncOperations.addHandlers(codec, SessionChannelHandler(user: user, codec: codec, byteCounter: counter))
    }

    /// Byte counter, TLS for https (with the certificate diagnosis when verifying), HTTP/1.1 client
    /// handlers and the response aggregator.
    @discardableResult
    static func addHTTPHandlers(to channel: any Channel, endpoint: WeightedEndpoint, context: LoopContext) throws -> WireByteCounter {
        let operations = channel.pipeline.syncOperations
        let counter = WireByteCounter(sink: context)
        try operations.addHandler(counter)
        if endpoint.transport.isSecure {
            guard let tls = context.environment.tls else { throw SessionError.tlsUnavailable }
            try operations.addHandlers(try tls.makeHandlers(httpHost: endpoint.host))
        }
        try operations.addHTTPClientHandlers()
        try operations.addHandler(NIOHTTPClientResponseAggregator(maxContentLength: context.parser.limits.maxBufferedBytes))
        return counter
    }
}
