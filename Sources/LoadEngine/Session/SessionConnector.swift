import LoadProfile
import NIOCore
import NIOWebSocket
import SessionCore

/// Opens connections for virtual users: the transport under the session. A connector builds the
/// connection's pipeline (`SessionPipeline`) and reports failures to the user (`connectFailed`); a
/// successful connection reports itself through its channel handler.
protocol UserConnecting: AnyObject {
    /// Connects `user` to `target` (chosen by its machine); the user hears `connected` or `connectFailed`.
    func connect(_ user: VirtualUser, to target: ConnectTarget)
}

/// Opens one event loop's connections, for every transport (TCP, WebSocket, BOSH), through reusable
/// bootstraps (`LoopBootstraps`); what a transport's pipeline holds is `SessionPipeline`'s business.
///
/// The connector finds the address of the target the session chose: its endpoint (or the fallback it
/// moved to) in the run's resolved set (`ResolvedEndpoints`, read through a per-loop copy), or a
/// server's XEP-0198 resumption location (`ResumeLocations`, looked up off the loop). No name is
/// ever looked up on the loop, and nothing is decided here. Loop-bound.
final class SessionConnector: UserConnecting {
    private unowned let context: LoopContext
    private lazy var bootstraps = LoopBootstraps(context: context)
    private var addresses: ResolvedEndpoints.LoopCopy
    private let resumeLocations: ResumeLocations
    /// Users whose connect waits for their resumption location's lookup.
    private var waitingForLocation: Set<ObjectIdentifier> = []

    init(context: LoopContext) {
        self.context = context
        addresses = ResolvedEndpoints.LoopCopy(context.environment.resolvedEndpoints)
        resumeLocations = ResumeLocations(eventLoop: context.eventLoop, resolver: context.environment.resolver)
    }

    func connect(_ user: VirtualUser, to target: ConnectTarget) {
        let environment = context.environment
        let web = environment.webEndpoint(target.endpoint)
        var address = addresses.address(target.endpoint, in: environment.resolvedEndpoints)
        if web == nil, target.attempt == 0, let location = target.resumeLocation {
            // Already waiting for a lookup (its login timed out and it connects again meanwhile): the
            // lookup's continuation connects it, once.
            guard !waitingForLocation.contains(ObjectIdentifier(user)) else { return }
            let lookup = resumeLocations.address(of: location, defaultPort: address.port ?? 5222) { [unowned self] in
                self.waitingForLocation.remove(ObjectIdentifier(user))
                if !user.machine.isEnded { self.connect(user, to: target) }
            }
            switch lookup {
            case .pending:
                waitingForLocation.insert(ObjectIdentifier(user))
                return
            case .known(let resumeAt): address = resumeAt ?? address
            }
        }
        let transport: SessionPipeline.Transport
        switch web?.transport {
        case nil, .tcp:
            context.recorder.increment(.connectionsTCP)
            transport = .tcp
        case .webSocket:
            context.recorder.increment(.connectionsWebSocket)
            transport = .webSocket(web!, requestKey: NIOWebSocketClientUpgrader.randomRequestKey())
        case .bosh:
            context.recorder.increment(.connectionsBOSH)
            // The session's second connection goes to the same address as its first (same node).
            transport = .bosh(web!, firstRID: UInt64.random(in: 1...(1 << 40))) { [unowned self, address] codec in
                self.openSecondary(for: codec, endpoint: web!, at: address)
            }
        }
        let bound = NIOLoopBound(user, eventLoop: context.eventLoop)
        bootstraps.connect(.session(user, transport), to: address).whenFailure { error in
            // A failed connect freed its channel and pipeline (a TLS handler's buffers too): it counts
            // toward the wave of closed connections after which the run gives free pages back
            // (HeapRelease) — a reconnect storm against a server that is down is mostly these.
            bound.value.loop.environment.closedConnections.wrappingIncrement(ordering: .relaxed)
            bound.value.connectFailed(ConnectionFailure(error))
        }
    }

    /// Opens a BOSH codec's second connection; a failure goes to the codec.
    private func openSecondary(for codec: BOSHCodec, endpoint: WeightedEndpoint, at address: SocketAddress) {
        let bound = NIOLoopBound(codec, eventLoop: context.eventLoop)
        bootstraps.connect(.boshSecondary(codec, endpoint), to: address).whenFailure { error in
            bound.value.secondaryFailed(ConnectionFailure(error))
        }
    }
}
