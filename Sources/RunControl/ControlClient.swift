import NIOCore
import NIOHTTP1
import NIOPosix

/// Sends one request to a run's control port and returns the answer (`xmppload control`): plain
/// HTTP/1.1 on NIO's singleton event loop group, one connection per request, with the run's token
/// as `Authorization: Bearer TOKEN` when given (the port refuses every request without it: 401).
public enum ControlClient {
    /// The control port's answer: the HTTP status and the body (JSON).
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var body: String
    }

    /// Connection or answer problems, said for people.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func send(
        host: String, port: Int, method: String, path: String, json: String? = nil, token: ControlToken?,
        timeout: TimeAmount = .seconds(10)
    ) async throws -> Answer {
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: Answer.self)
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        if let token { headers.add(name: "Authorization", value: "Bearer \(token.text)") }
        let body = json.map { Array($0.utf8) } ?? []
        headers.add(name: "Content-Length", value: String(body.count))
        if json != nil { headers.add(name: "Content-Type", value: "application/json") }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: headers)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(AnswerHandler(head: head, body: body, promise: promise))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            promise.fail(error)
            throw Failure(description: "cannot reach the control port at \(host):\(port): \(error) (is the run started with --control-port \(port)?)")
        }
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(Failure(description: "no answer from \(host):\(port) within \(timeout.nanoseconds / 1_000_000_000) s"))
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        return try await promise.futureResult.get()
    }
}

/// Collects one response and completes the promise with it (or fails it when the connection closes first).
/// Sends the request once connected.
private final class AnswerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let requestBody: [UInt8]
    private let promise: EventLoopPromise<ControlClient.Answer>
    private var status = 0
    private var body: [UInt8] = []

    init(head: HTTPRequestHead, body: [UInt8], promise: EventLoopPromise<ControlClient.Answer>) {
        self.head = head
        self.requestBody = body
        self.promise = promise
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !requestBody.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: requestBody)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body(var buffer): body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end: promise.succeed(ControlClient.Answer(status: status, body: String(decoding: body, as: UTF8.self)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ControlClient.Failure(description: "the control port closed the connection before answering"))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
