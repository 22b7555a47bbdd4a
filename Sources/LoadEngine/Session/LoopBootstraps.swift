import NIOCore
import NIOPosix

/// The `ClientBootstrap`s one connector reuses on its event loop (TCP, WebSocket or BOSH): one per
/// `--source` address (a single one without), each made on first use with the run's connect timeout,
/// a receive buffer that starts small (memory per idle session) and grows for bursts, and the
/// connector's channel initializer. TCP_NODELAY is ClientBootstrap's default.
///
/// `next()` picks the source address for the next connection round robin across the run's loops:
/// connection k of loop l uses address (k · loops + l) mod sources. Loop-bound.
final class LoopBootstraps {
    private unowned let context: LoopContext
    private let initializer: @Sendable (any Channel) -> EventLoopFuture<Void>
    /// By source address index (0 without `--source`).
    private var bootstraps: [Int: ClientBootstrap] = [:]
    /// Connections opened through these bootstraps on this loop.
    private var connections = 0

    init(context: LoopContext, initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>) {
        self.context = context
        self.initializer = initializer
    }

    /// The bootstrap for the next connection.
    func next() -> ClientBootstrap {
        let environment = context.environment
        let sources = environment.sourceAddresses.count
        let source = sources > 0 ? (connections &* environment.configuration.eventLoops &+ context.loopIndex) % sources : 0
        connections &+= 1
        if let made = bootstraps[source] { return made }
        let made = ClientBootstrap(group: context.eventLoop)
            .connectTimeout(TimeAmount(environment.configuration.connectTimeout))
            .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536))
            .channelInitializer(initializer)
        let bound = sources == 0 ? made : made.bind(to: environment.sourceAddresses[source])
        bootstraps[source] = bound
        return bound
    }
}
