import NIOCore
import NIOPosix
import SessionCore

/// The `ClientBootstrap`s one event loop's connector reuses for every transport: one per `--source`
/// address (a single one without), each made on first use with the run's connect timeout, a receive
/// buffer that starts small (memory per idle session) and grows for bursts up to 16 KiB, one read per
/// channel per loop turn (a flooding server costs its loop at most 16 KiB of parsing per turn and
/// session, so timers and the other sessions stay on time), a 64 KiB kernel send buffer (a server
/// that stops reading is felt after 128 KiB of answers, not 4 MB of autotuned buffer; see
/// docs/HARDENING.md) — set synchronously by the one channel initializer, which also installs the
/// pipeline of the connection being opened (`SessionPipeline`). TCP_NODELAY is ClientBootstrap's default.
///
/// Why reusable bootstraps: a bootstrap, its option list and its initializer closure per session cost
/// more than the XMPP work of a login. The initializer takes its pipeline from `pending`, set just
/// before `connect(to:)`: for a connect issued on the channel's own loop, NIO runs the initializer
/// synchronously inside `connect`; if it ever did not, the connect fails with the typed error
/// `bootstrap-no-session` instead of wiring the wrong user.
///
/// The source address of the next connection goes round robin across the run's loops: connection k
/// of loop l uses address (k · loops + l) mod sources. Loop-bound.
final class LoopBootstraps {
    private unowned let context: LoopContext
    /// By source address index (0 without `--source`).
    private var bootstraps: [Int: ClientBootstrap] = [:]
    /// Connections opened through these bootstraps on this loop.
    private var connections = 0
    /// The pipeline of the connection being opened, for the initializer.
    private var pending: SessionPipeline?
    private lazy var initializer: @Sendable (any Channel) -> EventLoopFuture<Void> = {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return { channel in
            let bootstraps = bound.value
            guard let pipeline = bootstraps.pending else {
                return channel.eventLoop.makeFailedFuture(SessionError.connection(.bootstrapWithoutSession))
            }
            bootstraps.pending = nil
            guard let options = channel.syncOptions else {
                return Self.setOptions(on: channel).assumeIsolated()
                    .flatMapThrowing { try pipeline.install(on: channel, context: bootstraps.context) }.nonisolated()
            }
            return channel.eventLoop.makeCompletedFuture {
                try options.setOption(.recvAllocator, value: Self.receiveAllocator)
                try options.setOption(.maxMessagesPerRead, value: 1)
                try options.setOption(.socketOption(.so_sndbuf), value: Self.sendBufferBytes)
                try pipeline.install(on: channel, context: bootstraps.context)
            }
        }
    }()

    /// The receive buffer: starts small (memory per idle session), grows for bursts up to 16 KiB.
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 16384)

    /// The options through futures, for a channel without synchronous options (none of NIO's socket
    /// channels: they all have them). The bootstrap's own `channelOption`s would cost ~10 allocations
    /// an option and connection (futures chained in `ChannelOptions.Storage.applyAll`; measured with
    /// heaptrack: three options were 30 allocations of a plain login's ~340); set synchronously in the
    /// initializer they cost none.
    private static func setOptions(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.setOption(.recvAllocator, value: receiveAllocator)
            .flatMap { channel.setOption(.maxMessagesPerRead, value: 1) }
            .flatMap { channel.setOption(.socketOption(.so_sndbuf), value: sendBufferBytes) }
    }

    /// SO_SNDBUF of every session socket (Linux doubles it: 128 KiB of kernel memory at most).
    static let sendBufferBytes: SocketOptionValue = 64 * 1024

    init(context: LoopContext) {
        self.context = context
    }

    /// Opens a connection to `address` whose pipeline is `pipeline`.
    func connect(_ pipeline: SessionPipeline, to address: SocketAddress) -> EventLoopFuture<any Channel> {
        pending = pipeline
        let future = next().connect(to: address)
        pending = nil
        return future
    }

    /// The bootstrap for the next connection.
    private func next() -> ClientBootstrap {
        let environment = context.environment
        let sources = environment.sourceAddresses.count
        let source = sources > 0 ? (connections &* environment.configuration.eventLoops &+ context.loopIndex) % sources : 0
        connections &+= 1
        if let made = bootstraps[source] { return made }
        let made = ClientBootstrap(group: context.eventLoop)
            .connectTimeout(TimeAmount(environment.configuration.connectTimeout))
            .channelInitializer(initializer)
        let bound = sources == 0 ? made : made.bind(to: environment.sourceAddresses[source])
        bootstraps[source] = bound
        return bound
    }
}
