import Foundation
import LoadEngine
import NIOCore
import Synchronization

/// The control port as a run's input (`--control-port`): a small HTTP server whose requests
/// (`ControlRequest`) steer the run through its `RunSteering` (`ControlHub`). Serves on one of the
/// run's event loops; every answer comes from values the hub keeps, so it never blocks a loop.
///
/// Every request must carry the run's `ControlToken` (`ControlGate`): without it the answer is 401
/// and the refusal is logged through `log` (stderr by default), without the token.
public final class ControlPort: RunInput {
    private let host: String
    private let port: Int
    private let gate: ControlGate
    private let server = Mutex<SmallHTTPServer?>(nil)

    /// Listens on `host:port` (port 0: any free one) once the run starts; answers only requests
    /// that carry `token`; refusals go to `log`, one line each (bounded, see `ControlGate`).
    public init(host: String, port: Int, token: ControlToken, log: @escaping @Sendable (String) -> Void = ControlPort.logToStandardError) {
        self.host = host
        self.port = port
        gate = ControlGate(token: token, log: log)
    }

    /// The bound port, once serving (nil before).
    public var boundPort: Int? { server.withLock { $0?.port } }

    /// Requests refused so far (no or a wrong token).
    public var refusedCount: Int { gate.refusedCount }

    public func start(steering: RunSteering, group: any EventLoopGroup) async throws -> RunNotice? {
        let hub = ControlHub(steering: steering)
        let gate = self.gate
        let started = try await SmallHTTPServer.start(host: host, port: port, group: group) { request in
            gate.answer(request) { hub.respond($0) }
        }
        server.withLock { $0 = started }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return .inputEndpoint(name: "control", url: "http://\(shownHost):\(started.port)")
    }

    public func stop() async {
        let running = server.withLock { server -> SmallHTTPServer? in
            defer { server = nil }
            return server
        }
        await running?.close()
    }

    /// `xmppload: <line>` on stderr.
    public static let logToStandardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data("xmppload: \(line)\n".utf8))
    }
}
