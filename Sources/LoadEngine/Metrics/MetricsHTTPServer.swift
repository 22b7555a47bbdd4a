import NIOCore

/// Serves `GET /metrics` (Prometheus text exposition) on a loopback address for an overnight soak
/// watched from Grafana, through the run's `SmallHTTPServer`. Anything else gets 404. Runs on one of
/// the run's event loops.
final class MetricsHTTPServer: Sendable {
    let exporter: PrometheusExporter
    private let server: SmallHTTPServer

    /// The bound port (useful with port 0).
    var port: Int { server.port }

    private init(exporter: PrometheusExporter, server: SmallHTTPServer) {
        self.exporter = exporter
        self.server = server
    }

    static func start(host: String, port: Int, group: any EventLoopGroup) async throws -> MetricsHTTPServer {
        let exporter = PrometheusExporter()
        let server = try await SmallHTTPServer.start(host: host, port: port, group: group) { request in
            let found = request.method == "GET" && (request.uri == "/metrics" || request.uri.hasPrefix("/metrics?"))
            guard found else {
                return SmallHTTPServer.Reply(status: .notFound, contentType: "text/plain", body: Array("not found: try /metrics\n".utf8))
            }
            return SmallHTTPServer.Reply(
                status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8", body: exporter.registry.emitToBuffer())
        }
        return MetricsHTTPServer(exporter: exporter, server: server)
    }

    func close() async {
        await server.close()
    }
}
