import LoadProfile
import LoadResults
import NIOCore
import NIOEmbedded
import NIOWebSocket
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// The WebSocket transport (RFC 7395) on an `EmbeddedChannel`: the HTTP upgrade, then XMPP framing
/// (`<open/>`, one element per text message, `<close/>`), under the same session as TCP. The server's
/// side is written as the bytes Prosody 0.12's mod_websocket sends (101 response, unmasked text frames).
@Suite struct WebSocketPipelineTests {
    /// RFC 6455 §1.3's example key and its accept value.
    static let requestKey = "dGhlIHNhbXBsZSBub25jZQ=="
    static let acceptKey = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    static let endpoint = WeightedEndpoint(host: "127.0.0.1", port: 5280, transport: .webSocket(secure: false, path: "/xmpp-websocket"))

    /// A WebSocket session (login, presence, logout) on `PipelineHarness`; the run's TLS mode is the
    /// default (starttls): over WebSocket the login must skip it.
    static func harness() throws -> PipelineHarness {
        let steps = "[login, {presence: available}, logout]"
        return try PipelineHarness(
            profile: "name: ws\nlogin: {sasl: PLAIN, resource: r1}\nsteps: \(steps)\n", endpoint: endpoint, requestKey: requestKey)
    }

    /// An unmasked server frame (FIN set) carrying `text`.
    static func frame(_ text: String, opcode: UInt8 = 0x1) -> [UInt8] {
        let payload = Array(text.utf8)
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return bytes + payload
    }

    /// The first client frame in `bytes`: it must be masked (RFC 6455 §5.3). Returns its text and the rest.
    static func unmask(_ bytes: ArraySlice<UInt8>) -> (String, ArraySlice<UInt8>)? {
        var index = bytes.startIndex
        guard bytes.count >= 6 else { return nil }
        index += 1
        let second = bytes[index]
        guard second & 0x80 != 0 else { return nil }
        var length = Int(second & 0x7F)
        index += 1
        if length == 126 {
            length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            index += 2
        } else if length == 127 {
            return nil
        }
        let key = Array(bytes[index..<index + 4])
        index += 4
        guard bytes.endIndex - index >= length else { return nil }
        let payload = bytes[index..<index + length].enumerated().map { $0.element ^ key[$0.offset % 4] }
        return (String(decoding: payload, as: UTF8.self), bytes[(index + length)...])
    }

    static let upgradeResponse =
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: \(acceptKey)\r\nSec-WebSocket-Protocol: xmpp\r\n\r\n"
    static let features =
        "<stream:features xmlns:stream='http://etherx.jabber.org/streams'><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
    static let open =
        "<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' from='load.test' id='ws1' version='1.0' xml:lang='en'/>"

    @Test func upgradeThenLoginPresenceAndLogoutOverFramedMessages() throws {
        let harness = try Self.harness()
        #expect(harness.user.machine.script.login.tls == TLSMode.none, "no STARTTLS over WebSocket")
        harness.context.start(harness.user)
        // The upgrade request: GET on the path, the xmpp subprotocol, the WebSocket headers from NIO.
        let request = String(decoding: try harness.clientBytes(), as: UTF8.self)
        #expect(request.hasPrefix("GET /xmpp-websocket HTTP/1.1\r\n"), "\(request)")
        for header in ["Sec-WebSocket-Protocol: xmpp", "Sec-WebSocket-Key: \(Self.requestKey)", "Upgrade: websocket", "Host: 127.0.0.1:5280"] {
            #expect(request.contains(header), "missing \(header) in \(request)")
        }
        try harness.serverSends(Self.upgradeResponse)
        // Connected only now: the session opens its stream with <open/>, not a stream header.
        var messages = try harness.clientMessages()
        #expect(messages == ["<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' to='load.test' version='1.0'/>"], "\(messages)")
        try harness.serverSendsFrame(Self.open)
        try harness.serverSendsFrame(Self.features)
        // No STARTTLS over WebSocket (the run's default TLS mode is starttls): SASL PLAIN at once.
        messages = try harness.clientMessages()
        #expect(messages.count == 1 && messages[0].hasPrefix("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'"), "\(messages)")
        try harness.serverSendsFrame("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        messages = try harness.clientMessages()
        #expect(messages.count == 1 && messages[0].hasPrefix("<open "), "restart: \(messages)")
        try harness.serverSendsFrame(Self.open)
        try harness.serverSendsFrame(
            "<stream:features xmlns:stream='http://etherx.jabber.org/streams'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
        messages = try harness.clientMessages()
        // Every stanza declares jabber:client itself (RFC 7395 §3.3.3).
        #expect(messages.count == 1 && messages[0].hasPrefix("<iq xmlns='jabber:client'"), "\(messages)")
        try harness.serverSendsFrame(
            "<iq xmlns='jabber:client' type='result' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq>"
        )
        messages = try harness.clientMessages()
        #expect(messages.contains { $0.hasPrefix("<presence xmlns='jabber:client'") }, "\(messages)")
        // A ping frame is answered with a pong (masked, same data).
        try harness.serverSendsFrame("p1", opcode: 0x9)
        let pong = try harness.clientBytes()
        #expect(pong.first == 0x8A && pong.count == 2 + 4 + 2 && pong[1] == 0x80 | 2)
        // The server echoes the presence; the profile logs out with <close/>; the server closes too.
        try harness.serverSendsFrame("<presence xmlns='jabber:client' from='user1@load.test/r1' to='user1@load.test/r1'/>")
        messages = try harness.clientMessages()
        #expect(messages.last == "<close xmlns='urn:ietf:params:xml:ns:xmpp-framing'/>", "\(messages)")
        try harness.serverSendsFrame("<close xmlns='urn:ietf:params:xml:ns:xmpp-framing'/>")
        #expect(harness.user.machine.isEnded)
        // Closing the connection sends a WebSocket close frame (masked, status 1000) first.
        let closeFrame = try harness.clientBytes()
        #expect(closeFrame.count == 2 + 4 + 2 && closeFrame[0] == 0x88 && closeFrame[1] == 0x80 | 2, "\(closeFrame)")
        if closeFrame.count == 8 {
            #expect([closeFrame[6] ^ closeFrame[2], closeFrame[7] ^ closeFrame[3]] == [0x03, 0xE8])
        }
        #expect(!harness.channel.isActive)
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsLoggedIn) == 1)
        #expect(snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.errors.isEmpty, "\(snapshot.errors)")
        #expect(snapshot.counter(.httpRequests) == 1 && snapshot.counter(.httpResponses) == 1)
        #expect(snapshot.latency["login.ws_upgrade"]?.count == 1)
        #expect(snapshot.latency["login.tls"] == nil)
        // Bytes on the wire include the HTTP upgrade and the frame headers.
        #expect(snapshot.counter(.bytesReceived) > UInt64(Self.upgradeResponse.utf8.count + Self.features.utf8.count))
        harness.finishIgnoringLeftovers()
    }

    @Test(arguments: [
        ("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "http-404"),
        (
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: \(acceptKey)\r\n\r\n",
            "ws-upgrade-refused"
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: wrong\r\nSec-WebSocket-Protocol: xmpp\r\n\r\n",
            "ws-upgrade-refused"
        ),
    ])
    func aRefusedUpgradeFailsTheConnectWithATypedError(response: String, kind: String) throws {
        let harness = try Self.harness()
        harness.context.start(harness.user)
        _ = try harness.clientBytes()
        try harness.serverSends(response)
        #expect(harness.user.machine.isEnded)
        let snapshot = harness.snapshot()
        #expect(snapshot.errors == [kind: 1], "\(snapshot.errors)")
        #expect(snapshot.counter(.sessionsFailed) == 1)
        #expect(snapshot.counter(.sessionsLoggedIn) == 0)
        harness.finishIgnoringLeftovers()
    }

    @Test func aBinaryMessageIsAProtocolError() throws {
        let harness = try Self.harness()
        harness.context.start(harness.user)
        _ = try harness.clientBytes()
        try harness.serverSends(Self.upgradeResponse)
        try harness.serverSendsFrame(Self.open)
        try harness.serverSendsFrame("<x/>", opcode: 0x2)
        #expect(harness.user.machine.isEnded)
        #expect(harness.snapshot().errors == ["web-protocol-error": 1], "\(harness.snapshot().errors)")
        harness.finishIgnoringLeftovers()
    }

    /// The codec's decoding on its own: framing elements and stanzas, one per message.
    @Test func messagesDecodeToStreamEvents() throws {
        let parser = StanzaParser()
        let allocator = ByteBufferAllocator()
        guard case .opened(let header) = try XMPPWebSocketCodec.decode(allocator.buffer(string: Self.open), parser: parser) else {
            Issue.record("open is not .opened")
            return
        }
        #expect(header.id == "ws1" && header.from == "load.test" && header.language == "en")
        guard
            case .closed = try XMPPWebSocketCodec.decode(
                allocator.buffer(string: "<close xmlns='urn:ietf:params:xml:ns:xmpp-framing'/>"), parser: parser)
        else {
            Issue.record("close is not .closed")
            return
        }
        guard
            case .element(let message) = try XMPPWebSocketCodec.decode(
                allocator.buffer(string: "<message to='a@b'><body>hi</body></message>"), parser: parser)
        else {
            Issue.record("message is not an element")
            return
        }
        #expect(
            message.name == "message" && message.namespace == XMPPNamespace.client
                && message.firstChild(named: "body", namespace: XMPPNamespace.client)?.text == "hi")
        #expect(throws: XMPPStreamError.self) { try XMPPWebSocketCodec.decode(allocator.buffer(string: "<a><b></a>"), parser: parser) }
    }
}

extension PipelineHarness {
    /// The client's WebSocket messages since the last call (unmasked), checking each is masked.
    func clientMessages() throws -> [String] {
        var frames = try clientBytes()[...]
        var messages: [String] = []
        while !frames.isEmpty {
            let (message, rest) = try #require(WebSocketPipelineTests.unmask(frames))
            messages.append(message)
            frames = rest
        }
        return messages
    }

    /// The server sends one WebSocket message (an unmasked frame).
    func serverSendsFrame(_ message: String, opcode: UInt8 = 0x1) throws {
        try serverSends(WebSocketPipelineTests.frame(message, opcode: opcode))
    }
}
