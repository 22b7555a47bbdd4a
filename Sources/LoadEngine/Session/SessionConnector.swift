import LoadProfile
import NIOCore
import NIOPosix
import SessionCore

/// Opens connections for virtual users: the transport under the session. A connector builds the
/// connection's pipeline (`SessionChannelHandler.pipeline`) and reports failures to the user
/// (`connectFailed`); a successful connection reports itself through its channel handler.
protocol UserConnecting: AnyObject {
    func connect(_ user: VirtualUser)
}

/// Opens TCP connections for one event loop's virtual users, with reusable bootstraps
/// (`LoopBootstraps`: one per source address).
///
/// Why one bootstrap per loop: a bootstrap, its option list and its initializer closure per session
/// cost more than the XMPP work of a login. The initializer takes the user from `connectingUser`,
/// set just before `connect(to:)`: for a connect issued on the channel's own loop, NIO runs the
/// initializer synchronously inside `connect`; if it ever did not, the connect fails with the typed
/// error `bootstrap-no-session` instead of wiring the wrong user. Loop-bound.
final class SessionConnector: UserConnecting {
    private unowned let context: LoopContext
    private lazy var bootstraps = LoopBootstraps(context: context, initializer: channelInitializer())
    private var connectingUser: VirtualUser?
    /// XEP-0198 resumption locations seen on this loop, resolved.
    private var resumeLocations: [String: SocketAddress?] = [:]
    /// Web transports (`ws://`, `http://` endpoints), made on first use.
    private lazy var webSockets = WebSocketConnector(context: context)
    private lazy var bosh = BOSHConnector(context: context)

    init(context: LoopContext) {
        self.context = context
    }

    /// Connects `user` to its endpoint (`connectTarget`: after failed connects, the next of its
    /// RFC 2782 order); the user hears `connected` or `connectFailed`.
    func connect(_ user: VirtualUser) {
        let environment = context.environment
        if let web = environment.webEndpoint(user.endpoint) {
            let address = environment.endpointAddresses[min(user.endpoint, environment.endpointAddresses.count - 1)]
            if case .bosh = web.transport { return bosh.connect(user, to: web, at: address) }
            return webSockets.connect(user, to: web, at: address)
        }
        let bound = NIOLoopBound(user, eventLoop: context.eventLoop)
        connectingUser = user
        context.recorder.increment(.connectionsTCP)
        // The session's endpoint, or the next of its RFC 2782 order after failed connects.
        var server = environment.endpointAddresses[min(user.connectTarget, environment.endpointAddresses.count - 1)]
        if user.isFirstTry, let location = user.machine.resumeLocation, let address = resumeAddress(location, port: server.port ?? 5222) {
            server = address
        }
        bootstraps.next().connect(to: server).whenFailure { error in
            bound.value.connectFailed(ConnectionFailure(error))
        }
        connectingUser = nil
    }

    /// The address of a server's XEP-0198 resumption `location` ("host", "host:port", "[v6]:port" or a
    /// bare IPv6 address; `defaultPort` when it names none), parsed as `--server` endpoints are
    /// (`WeightedEndpoint.parse`), resolved once per loop and remembered; nil (resume at the session's
    /// own endpoint) when it does not parse or resolve. A host name is resolved on the loop
    /// (getaddrinfo), once per distinct location.
    private func resumeAddress(_ location: String, port defaultPort: Int) -> SocketAddress? {
        if let known = resumeLocations[location] { return known }
        let colons = location.filter { $0 == ":" }.count
        let text: String
        if location.hasPrefix("[") {
            text = location.contains("]:") ? location : "\(location):\(defaultPort)"
        } else {
            text = colons > 1 ? "[\(location)]:\(defaultPort)" : colons == 1 ? location : "\(location):\(defaultPort)"
        }
        var address: SocketAddress?
        if case .success(let endpoint) = WeightedEndpoint.parse(text) {
            address = try? SocketAddress.makeAddressResolvingHost(endpoint.host, port: endpoint.port)
        }
        resumeLocations[location] = address
        return address
    }

    /// Installs the session pipeline for the user being connected (`connectingUser`).
    private func channelInitializer() -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return { channel in
            let connector = bound.value
            guard let user = connector.connectingUser else {
                return channel.eventLoop.makeFailedFuture(SessionError.connection(.bootstrapWithoutSession))
            }
            connector.connectingUser = nil
            do {
                try channel.pipeline.syncOperations.addHandlers(
                    SessionChannelHandler.pipeline(for: user, loop: connector.context))
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }
}
