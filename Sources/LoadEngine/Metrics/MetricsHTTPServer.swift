import NIOCore
import NIOHTTP1
import NIOPosix

/// Serves `GET /metrics` (Prometheus text exposition) on a loopback address for an overnight soak
/// watched from Grafana. Anything else gets 404. Runs on one of the run's event loops.
final class MetricsHTTPServer: Sendable {
    let exporter: PrometheusExporter
    private let channel: any Channel

    /// The bound port (useful with port 0).
    var port: Int { channel.localAddress?.port ?? 0 }

    private init(exporter: PrometheusExporter, channel: any Channel) {
        self.exporter = exporter
        self.channel = channel
    }

    static func start(host: String, port: Int, group: any EventLoopGroup) async throws -> MetricsHTTPServer {
        let exporter = PrometheusExporter()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MetricsRequestHandler(exporter: exporter))
                }
            }
            .bind(host: host, port: port).get()
        return MetricsHTTPServer(exporter: exporter, channel: channel)
    }

    func close() async {
        try? await channel.close()
    }
}

/// Answers one HTTP request at a time on a connection.
private final class MetricsRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let exporter: PrometheusExporter
    private var path = ""

    init(exporter: PrometheusExporter) { self.exporter = exporter }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.method == .GET ? head.uri : ""
        case .body:
            break
        case .end:
            let found = path == "/metrics" || path.hasPrefix("/metrics?")
            let body = found ? exporter.registry.emitToBuffer() : Array("not found: try /metrics\n".utf8)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain")
            headers.add(name: "Content-Length", value: String(body.count))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
