import LoadEngine
import NIOCore
import Synchronization

/// The control port as a run's input (`--control-port`): a small HTTP server whose requests
/// (`ControlRequest`) steer the run through its `RunSteering` (`ControlHub`). Serves on one of the
/// run's event loops; every answer comes from values the hub keeps, so it never blocks a loop.
public final class ControlPort: RunInput {
    private let host: String
    private let port: Int
    private let server = Mutex<SmallHTTPServer?>(nil)

    /// Listens on `host:port` (port 0: any free one) once the run starts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The bound port, once serving (nil before).
    public var boundPort: Int? { server.withLock { $0?.port } }

    public func start(steering: RunSteering, group: any EventLoopGroup) async throws -> RunNotice? {
        let hub = ControlHub(steering: steering)
        let started = try await SmallHTTPServer.start(host: host, port: port, group: group) { hub.respond($0) }
        server.withLock { $0 = started }
        return .inputEndpoint(name: "control", url: "http://\(host):\(started.port)")
    }

    public func stop() async {
        let running = server.withLock { server -> SmallHTTPServer? in
            defer { server = nil }
            return server
        }
        await running?.close()
    }
}
