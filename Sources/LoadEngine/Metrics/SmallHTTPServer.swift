import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server for the run's own endpoints (`/metrics`, the control port): one request
/// at a time per connection, bodies up to `maxBody` bytes, and a synchronous `respond` that runs on
/// the connection's event loop (it must not block: the endpoints answer from values they keep).
public final class SmallHTTPServer: Sendable {
    /// One request as `respond` sees it.
    public struct Request: Sendable {
        public var method: String
        public var uri: String
        /// The request's header fields, in order (names as sent).
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        /// Who sent it, `address:port` (nil when unknown).
        public var remoteAddress: String?

        public init(
            method: String, uri: String, headers: [(name: String, value: String)] = [], body: [UInt8], remoteAddress: String? = nil
        ) {
            self.method = method
            self.uri = uri
            self.headers = headers
            self.body = body
            self.remoteAddress = remoteAddress
        }

        /// The first value of the header field `name` (case-insensitive), or nil.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// One answer: status, content type, body and any further header fields.
    public struct Reply: Sendable {
        public var status: HTTPResponseStatus
        public var contentType: String
        public var body: [UInt8]
        /// Header fields besides Content-Type and Content-Length (e.g. `WWW-Authenticate`).
        public var headers: [(name: String, value: String)]

        public init(status: HTTPResponseStatus, contentType: String, body: [UInt8], headers: [(name: String, value: String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.headers = headers
        }

        public init(status: HTTPResponseStatus = .ok, text: String) {
            self.init(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
        }
    }

    /// The largest request body read (a control request is a few dozen bytes).
    public static let maxBody = 64 * 1024

    private let channel: any Channel

    /// The bound port (useful with port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    private init(channel: any Channel) { self.channel = channel }

    public static func start(
        host: String, port: Int, group: any EventLoopGroup, respond: @escaping @Sendable (Request) -> Reply
    ) async throws -> SmallHTTPServer {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(respond: respond))
                }
            }
            .bind(host: host, port: port).get()
        return SmallHTTPServer(channel: channel)
    }

    public func close() async {
        try? await channel.close()
    }
}

/// Collects one request's head and body, answers it with `respond`, and keeps the connection.
private final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: @Sendable (SmallHTTPServer.Request) -> SmallHTTPServer.Reply
    private var request = SmallHTTPServer.Request(method: "", uri: "", body: [])
    private var tooLarge = false

    init(respond: @escaping @Sendable (SmallHTTPServer.Request) -> SmallHTTPServer.Reply) { self.respond = respond }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let remote = context.channel.remoteAddress.map { address in
                address.ipAddress.map { ip in address.port.map { ip.contains(":") ? "[\(ip)]:\($0)" : "\(ip):\($0)" } ?? ip } ?? "\(address)"
            }
            request = SmallHTTPServer.Request(
                method: head.method.rawValue, uri: head.uri, headers: head.headers.map { (name: $0.name, value: $0.value) }, body: [],
                remoteAddress: remote)
            tooLarge = false
        case .body(var buffer):
            if request.body.count + buffer.readableBytes > SmallHTTPServer.maxBody {
                tooLarge = true
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                request.body += bytes
            }
        case .end:
            let reply =
                tooLarge
                ? SmallHTTPServer.Reply(status: .payloadTooLarge, text: "request body over \(SmallHTTPServer.maxBody) bytes\n")
                : respond(request)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: reply.contentType)
            headers.add(name: "Content-Length", value: String(reply.body.count))
            for field in reply.headers { headers.add(name: field.name, value: field.value) }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: reply.status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: reply.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            request = SmallHTTPServer.Request(method: "", uri: "", body: [])
        }
    }
}
