// The probe's channel, reached from the driver's task.

import LoadEngine
import NIOCore
import NIOPosix
import XMPPCore

/// The probe's channel as seen from the driver's task: every call hops to the channel's loop.
struct ProbeConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<ProbeChannelHandler>

    static func open(host: String, port: Int, tls: ProbeTLS?, timeout: TimeAmount, loop: any EventLoop) async throws -> ProbeConnection {
        let bootstrap = ClientBootstrap(group: loop).connectTimeout(timeout).channelInitializer { channel in
            do {
                try channel.pipeline.syncOperations.addHandlers(ProbeChannelHandler.pipeline(tls: tls).handlers)
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
        let channel = try await bootstrap.connect(host: host, port: port).get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ProbeChannelHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return ProbeConnection(channel: channel, handler: handler)
    }

    func next(within timeout: TimeAmount) async throws -> ProbeArrival? {
        let handler = self.handler
        return try await channel.eventLoop.flatSubmit { handler.value.next(within: timeout) }.get()
    }

    func send(_ output: XMPPStreamOutput) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.send(output) }
    }

    /// Resets the framer and sends a new stream header, in one step on the loop.
    func restartStream(header: XMPPStreamOutput) {
        let handler = self.handler
        channel.eventLoop.execute {
            handler.value.restartStream()
            handler.value.send(header)
        }
    }

    func startTLS() async throws {
        let handler = self.handler
        try await channel.eventLoop.submit { try handler.value.startTLS() }.get()
    }

    func close() async {
        try? await channel.close()
    }
}
