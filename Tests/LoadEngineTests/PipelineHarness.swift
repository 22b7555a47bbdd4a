import Foundation
import LoadProfile
import LoadResults
import NIOCore
import NIOEmbedded
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

// The one harness of the pipeline tests: a virtual user over the real pipeline on EmbeddedChannels.

/// One virtual user with its own loop context and recorder, connected over the real pipeline of its
/// transport (`SessionPipeline`) to `EmbeddedChannel`s on a virtual-time loop: `channels[0]` is the
/// session's connection, `channels[1]` a BOSH session's second one. No sockets; timers fire when the
/// test advances `loop`'s time. Each pipeline suite adds what its transport's bytes need (transcripts,
/// WebSocket frames, BOSH bodies) in an extension.
final class PipelineHarness {
    let loop = EmbeddedEventLoop()
    let channels: [EmbeddedChannel]
    let context: LoopContext
    let user: VirtualUser
    /// The session's (first) connection.
    var channel: EmbeddedChannel { channels[0] }

    /// - Parameters:
    ///   - yaml: the session's profile.
    ///   - endpoint: the run's one endpoint (nil: TCP to 127.0.0.1:5222).
    ///   - tls: the run's TLS mode (nil: the default, STARTTLS, which web transports skip).
    ///   - requestKey: the WebSocket `Sec-WebSocket-Key`; `firstRID`: the BOSH session's first rid.
    init(
        profile yaml: String, endpoint: WeightedEndpoint? = nil, tls: TLSMode? = nil,
        requestKey: String = "dGhlIHNhbXBsZSBub25jZQ==", firstRID: UInt64 = 1000
    ) throws {
        let definition = try ProfileLoader.load(yaml: yaml, file: "pipeline.yaml")
        let port = endpoint?.port ?? 5222
        var configuration = RunConfiguration(
            host: "127.0.0.1", port: port, domain: "load.test", accounts: 1...10,
            password: "secret", tls: tls, outputDirectory: "/tmp/unused")
        configuration.endpoints = endpoint.map { [$0] } ?? []
        let server = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let environment = RunEnvironment(
            configuration: configuration, runID: "test-run", server: server, tls: nil,
            definition: definition, seed: 1, clockOrigin: loop.now)
        context = LoopContext(eventLoop: loop, environment: environment, loopIndex: 0)
        channels = [EmbeddedChannel(loop: loop), EmbeddedChannel(loop: loop)]
        context.connector = EmbeddedConnector(
            channels: channels, context: context, address: server, endpoint: endpoint, requestKey: requestKey, firstRID: firstRID)
        let identity = SessionIdentity(serial: 0, slot: 0, accountNumber: 1, username: "user1", bareJID: "user1@load.test")
        _ = environment.directory.claim(0)
        let machine = SessionMachine(
            identity: identity, script: environment.script(profile: 0, endpoint: 0), settings: environment.settings,
            host: context, generator: SeededGenerator(seed: 1, stream: 0), intendedStart: context.now())
        user = VirtualUser(machine: machine, loop: context, phase: 0)
    }

    /// Starts the user: it arms its login timeout and connects.
    func start() {
        context.start(user)
    }

    var isEnded: Bool { user.machine.isEnded }

    /// Everything the client wrote on connection `slot` since the last call.
    func clientBytes(on slot: Int = 0) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let buffer = try channels[slot].readOutbound(as: ByteBuffer.self) {
            bytes += buffer.readableBytesView
        }
        return bytes
    }

    /// Feeds `bytes` from the server on connection `slot`, then runs what NIO scheduled meanwhile
    /// (handler removals after an HTTP upgrade, flushes at the end of a loop tick).
    func serverSends(_ bytes: [UInt8], on slot: Int = 0) throws {
        try channels[slot].writeInbound(channels[slot].allocator.buffer(bytes: bytes))
        loop.run()
    }

    func serverSends(_ text: String, on slot: Int = 0) throws {
        try serverSends(Array(text.utf8), on: slot)
    }

    func snapshot() -> IntervalSnapshot {
        context.recorder.takeSnapshot(start: 0, end: 1)
    }

    /// Finishes every channel; each must hold nothing unread (the session may have closed it already).
    func finish() throws {
        for channel in channels {
            #expect(try channel.finish(acceptAlreadyClosed: true).isClean)
        }
    }

    /// Finishes every channel whatever it still holds (the test checked what it wanted).
    func finishIgnoringLeftovers() {
        for channel in channels { _ = try? channel.finish(acceptAlreadyClosed: true) }
    }

    /// Connects the harness's user: installs the real pipeline of its transport on the first
    /// embedded channel and connects it; a BOSH codec's second connection is the second channel.
    final class EmbeddedConnector: UserConnecting {
        let channels: [EmbeddedChannel]
        unowned let context: LoopContext
        let address: SocketAddress
        let endpoint: WeightedEndpoint?
        let requestKey: String
        let firstRID: UInt64

        init(
            channels: [EmbeddedChannel], context: LoopContext, address: SocketAddress, endpoint: WeightedEndpoint?,
            requestKey: String, firstRID: UInt64
        ) {
            (self.channels, self.context, self.address, self.endpoint) = (channels, context, address, endpoint)
            (self.requestKey, self.firstRID) = (requestKey, firstRID)
        }

        func connect(_ user: VirtualUser, to target: ConnectTarget) {
            do {
                try SessionPipeline.session(user, transport()).install(on: channels[0], context: context)
                try channels[0].connect(to: address).wait()
            } catch {
                user.connectFailed(ConnectionFailure(error))
            }
        }

        private func transport() -> SessionPipeline.Transport {
            guard let endpoint else { return .tcp }
            switch endpoint.transport {
            case .tcp: return .tcp
            case .webSocket: return .webSocket(endpoint, requestKey: requestKey)
            case .bosh:
                let (second, context, address) = (channels[1], self.context, self.address)
                return .bosh(endpoint, firstRID: firstRID) { codec in
                    do {
                        try SessionPipeline.boshSecondary(codec, endpoint).install(on: second, context: context)
                        try second.connect(to: address).wait()
                    } catch {
                        codec.secondaryFailed(ConnectionFailure(error))
                    }
                }
            }
        }
    }
}
