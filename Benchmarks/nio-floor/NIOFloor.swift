// nio-floor — what SwiftNIO itself costs per login and per chat message, between the C floors and xmppload.
//
// The two minimal C clients Benchmarks/login-floor and Benchmarks/message-floor, redone on SwiftNIO's
// public API and nothing else: one MultiThreadedEventLoopGroup thread, a ClientBootstrap, one
// ChannelInboundHandler per connection. The exchange is the C floors' and so xmppload's byte for byte
// (the same stanzas, SCRAM-SHA-1 with xmppload's crypto: nonces from a 4 KiB block of libcrypto's
// generator, the three keys cached per salt and iteration count, two on-stack HMACs a login through the
// CCrypto shim's xmppload_hmac; SASL PLAIN and xmppload's stamped chat message, one in flight, for the
// message floor), one writeAndFlush of a ByteBuffer per send, substring matching on a ByteBuffer
// accumulator per connection instead of an XML parser (no libxml2, no Foundation), libcrypto through
// CCrypto for the same calls as the C code. So the CPU it spends per login or message, minus the C
// floor's, is what NIO's channels, pipeline, buffers and event loop cost; xmppload's own figure minus
// this one is what xmppload adds on top of NIO. Not a load tool: no error recovery beyond exiting with a
// one-line message (like the C `die`), including when nothing is read for 30 s while waiting for an
// answer (a once-a-second check on the event loop, the counterpart of epoll_wait's timeout in C).
// Expects Prosody's way of writing XML (single-quoted attributes), i.e. scripts/local-server.
//
// usage: nio-floor login HOST PORT DOMAIN PASSWORD FIRST COUNT RATE
//   as login-floor: logs in user<FIRST>..user<FIRST+COUNT-1> one at a time, login k starting at
//   start + k/RATE s (late starts run at once, as soon as the previous login is over); prints:
//   logins cpu_seconds user_seconds kernel_seconds wall_seconds (CPU of the login loop only)
// usage: nio-floor message HOST PORT DOMAIN PASSWORD FIRST SECOND COUNT
//   as message-floor: user<FIRST> and user<SECOND> log in, then COUNT chat messages (xmppload's stamped
//   stanza) go back and forth between them, one in flight, each sent once the previous one arrived; prints:
//   messages cpu_seconds user_seconds kernel_seconds wall_seconds (CPU of the message loop only)

import CCrypto
import Glibc
import NIOCore
import NIOPosix

// MARK: - Errors, clocks, output

func die(_ what: String, _ detail: String? = nil) -> Never {
    var line = "nio-floor: " + what
    if let detail { line += ": " + detail }
    line += "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}

func cpuTimes() -> (user: Double, kernel: Double) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// What both modes print: the C floors' line.
struct Figures: Sendable {
    var count: Int
    var user: Double
    var kernel: Double
    var wall: Double

    init(count: Int, from before: (user: Double, kernel: Double), start: NIODeadline) {
        let after = cpuTimes()
        self.count = count
        self.user = after.user - before.user
        self.kernel = after.kernel - before.kernel
        self.wall = Double((NIODeadline.now() - start).nanoseconds) / 1e9
    }

    func print() {
        _ = withVaList([count, user + kernel, user, kernel, wall]) { vprintf("%ld %.4f %.4f %.4f %.3f\n", $0) }
        fflush(nil)
    }
}

// MARK: - Bytes

/// Offset of the first `needle` in `hay[from..<to]`, or nil: memchr for its first byte, memcmp for the rest
/// (glibc's memmem is not visible to Swift without _GNU_SOURCE).
func search(_ hay: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer, from: Int, to: Int? = nil) -> Int? {
    guard let base = hay.baseAddress, let n = needle.baseAddress, needle.count > 0 else { return nil }
    let last = (to ?? hay.count) - needle.count  // the last offset where the needle fits
    let first = Int32(needle[0])
    var at = from
    while at <= last {
        guard let hit = memchr(base + at, first, last - at + 1) else { return nil }
        at = UnsafeRawPointer(hit) - base
        if memcmp(base + at, n, needle.count) == 0 { return at }
        at += 1
    }
    return nil
}

func search(_ hay: UnsafeRawBufferPointer, _ needle: StaticString, from: Int, to: Int? = nil) -> Int? {
    search(hay, UnsafeRawBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount), from: from, to: to)
}

func search(_ hay: [UInt8], _ needle: StaticString) -> Int? {
    hay.withUnsafeBytes { search($0, needle, from: 0) }
}

extension ByteBuffer {
    /// Readable offset just past the first `needle` at or after readable offset `from` (before `to`), or nil.
    func offset(after needle: StaticString, from: Int, to: Int? = nil) -> Int? {
        withUnsafeReadableBytes { search($0, needle, from: from, to: to) }.map { $0 + needle.utf8CodeUnitCount }
    }

    func offset(after needle: [UInt8], from: Int, to: Int? = nil) -> Int? {
        withUnsafeReadableBytes { hay in needle.withUnsafeBytes { search(hay, $0, from: from, to: to) } }.map { $0 + needle.count }
    }

    func text(from: Int) -> String {
        getString(at: readerIndex + from, length: readableBytes - from) ?? ""
    }
}

func base64(_ bytes: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)
    let n = EVP_EncodeBlock(&out, bytes, Int32(bytes.count))
    out.removeLast(out.count - Int(n))
    return out
}

/// EVP_DecodeBlock less the padding, as the C `unb64`; empty when that is not positive.
func unbase64(_ src: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 3 * (src.count / 4) + 3)
    var length = src.withMemoryRebound(to: UInt8.self) { EVP_DecodeBlock(&out, $0.baseAddress, Int32($0.count)) }
    var n = src.count
    while n > 0 && src[n - 1] == UInt8(ascii: "=") {
        length -= 1
        n -= 1
    }
    out.removeLast(out.count - max(Int(length), 0))
    return out
}

/// HMAC-SHA-1 as xmppload makes it (CryptoPrimitives.hmac): the CCrypto shim's on-stack HMAC.
func hmacSHA1(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 64)
    let count = xmppload_hmac(1, key, key.count, data, data.count, &out)
    out.removeLast(out.count - Int(count))
    return out
}

/// xmppload's RandomPool: bytes handed out once each from a 4 KiB block of libcrypto's generator.
struct RandomBlock {
    private var block = [UInt8](repeating: 0, count: 4096)
    private var next = 4096

    mutating func bytes(_ count: Int) -> [UInt8] {
        if block.count - next < count {
            if RAND_bytes(&block, Int32(block.count)) != 1 { die("RAND_bytes failed") }
            next = 0
        }
        defer { next += count }
        return Array(block[next..<next + count])
    }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// A fixed string to write as is, over and over (ByteBuffer is copy-on-write: writing it shares it).
func fixed(_ s: String) -> ByteBuffer { ByteBuffer(string: s) }

func streamHeader(_ domain: String) -> ByteBuffer {
    fixed(
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
            + "version='1.0' to='\(domain)'>")
}

// MARK: - The event loop's state common to both modes

/// Where both modes connect: the server and the account password.
struct Server: Sendable {
    var address: SocketAddress
    var domain: String
    var password: String
}

/// Owned by the one event loop thread: what both modes share (the server, the stream header, the
/// bootstrap whose connections get `makeConnection()`'s handler, the measured interval, the result)
/// and the 30 s no-answer check.
class Floor {
    let loop: EventLoop
    let server: Server
    let done: EventLoopPromise<Figures>
    let header: ByteBuffer
    private var bootstrap: ClientBootstrap?
    /// Reads so far (either connection); the watchdog compares it from one tick to the next.
    var reads = 0
    /// Whether the client is waiting for the server (C: inside `wait_for` or a connect).
    var waiting = false
    private var lastReads = 0
    private var quietSeconds = 0
    /// When the measured loop began, and the CPU times then.
    private(set) var start = NIODeadline.now()
    private var before = (user: 0.0, kernel: 0.0)

    init(server: Server, loop: EventLoop, done: EventLoopPromise<Figures>) {
        self.loop = loop
        self.server = server
        self.done = done
        self.header = streamHeader(server.domain)
        let floor = NIOLoopBound(self, eventLoop: loop)
        bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.seconds(30))
            .channelInitializer { channel in
                do {
                    try channel.pipeline.syncOperations.addHandler(floor.value.makeConnection())
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
    }

    /// The handler of the connection being opened (a mode's own).
    func makeConnection() -> any ChannelHandler { fatalError("a mode makes its connections") }

    /// Opens a connection to the server; a failure (refused, or the 30 s connect timeout) ends the run.
    func connect() {
        waiting = true
        bootstrap!.connect(to: server.address).whenFailure { error in
            if case ChannelError.connectTimeout = error { die("connect timed out") }
            die("connect failed", "\(error)")
        }
    }

    /// The measured loop begins now.
    func startMeasuring() {
        start = .now()
        before = cpuTimes()
    }

    /// The measured loop ended after `count` logins or messages.
    func finish(count: Int) {
        done.succeed(Figures(count: count, from: before, start: start))
    }

    /// What is being waited for, for the timeout message.
    var awaited: String { "" }

    func startWatchdog() {
        loop.assumeIsolated().scheduleTask(in: .seconds(1)) { self.tick() }
    }

    private func tick() {
        if !waiting || reads != lastReads {
            quietSeconds = 0
            lastReads = reads
        } else {
            quietSeconds += 1
            if quietSeconds >= 30 { die("no answer within 30 s waiting for", awaited) }
        }
        startWatchdog()
    }
}

// MARK: - login: login-floor's loop

struct LoginConfig: Sendable {
    var first: Int
    var count: Int
    var rate: Double
}

final class LoginFloor: Floor {
    let config: LoginConfig
    let bind = fixed("<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>load</resource></bind></iq>")
    let roster = fixed("<iq type='get' id='q1'><query xmlns='jabber:iq:roster'/></iq>")
    let presence = fixed("<presence/>")
    let goodbye = fixed("<presence type='unavailable'/></stream:stream>")
    /// The login under way (k in the C loop) and its connection.
    private(set) var k = 0
    var current: LoginConnection?
    /// ClientKey, StoredKey and ServerKey cached for the last (salt, iterations), as RFC 5802 allows
    /// and xmppload's SCRAMKeyCache does.
    var cachedSalt: [UInt8] = []
    var cachedIterations: Int32 = 0
    var clientKey: [UInt8] = []
    var storedKey: [UInt8] = []
    var serverKey: [UInt8] = []
    /// Where the nonces come from.
    var random = RandomBlock()

    init(server: Server, config: LoginConfig, loop: EventLoop, done: EventLoopPromise<Figures>) {
        self.config = config
        super.init(server: server, loop: loop, done: done)
    }

    override func makeConnection() -> any ChannelHandler {
        let connection = LoginConnection(floor: self, user: config.first + k)
        current = connection
        return connection
    }

    override var awaited: String { current?.awaited ?? "" }

    func begin() {
        startWatchdog()
        startMeasuring()
        connect()
    }

    /// The server closed login k's stream.
    func loginFinished() {
        waiting = false
        current = nil
        k += 1
        if k == config.count {
            finish(count: k)
            return
        }
        let due = start + .nanoseconds(Int64(Double(k) / config.rate * 1e9))
        if due > .now() {
            loop.assumeIsolated().scheduleTask(deadline: due) { self.connect() }
        } else {
            connect()
        }
    }
}

/// One login: the C `login()` as a state machine over the bytes of this connection (kept whole, as C's `in`).
final class LoginConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case features(from: Int)
        case challenge(from: Int)
        case success(from: Int)
        case restartedFeatures(from: Int)
        case bound(from: Int)
        case rosterID(from: Int)
        case rosterEnd(from: Int)
        case presence(from: Int)
        case presenceEnd(from: Int)
        case closing
    }

    private let floor: LoginFloor
    private let user: Int
    private let own: [UInt8]
    private var input = ByteBuffer()
    private var state = State.features(from: 0)
    private var firstBare: [UInt8] = []
    /// The ServerSignature the server must send back (computed with the proof, as SCRAMClient does).
    private var serverSignature: [UInt8] = []

    init(floor: LoginFloor, user: Int) {
        self.floor = floor
        self.user = user
        self.own = bytes("from='user\(user)@\(floor.server.domain)/load'")
    }

    var awaited: String {
        switch state {
        case .features, .restartedFeatures: "</stream:features>"
        case .challenge: "</challenge>"
        case .success: "</success>"
        case .bound, .rosterEnd: "</iq>"
        case .rosterID: "id='q1'"
        case .presence: "<presence"
        case .presenceEnd: ">"
        case .closing: "the close"
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        input = context.channel.allocator.buffer(capacity: 4096)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(floor.header), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        floor.reads += 1
        input.writeBuffer(&bytes)
        if input.readableBytes >= 65535 { die("more than 64 KiB in one login") }
        advance(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        guard case .closing = state else { die("server closed the connection waiting for", awaited) }
        floor.loginFinished()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        die("read failed", "\(error)")
    }

    /// C's `wait_for(needle, from)`: the offset just past the needle, or nil until more bytes come.
    private func find(_ needle: StaticString, from: Int) -> Int? {
        if let hit = input.offset(after: needle, from: from) { return hit }
        if input.offset(after: "<failure", from: from) != nil || input.offset(after: "<stream:error", from: from) != nil {
            die("the server refused the login", input.text(from: from))
        }
        return nil
    }

    private func send(_ context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private func send(_ context: ChannelHandlerContext, _ parts: [UInt8]...) {
        var buffer = context.channel.allocator.buffer(capacity: parts.reduce(0) { $0 + $1.count })
        for part in parts { buffer.writeBytes(part) }
        send(context, buffer)
    }

    private func advance(context: ChannelHandlerContext) {
        while true {
            switch state {
            case .features(let from):
                guard let at = find("</stream:features>", from: from) else { return }
                sendAuth(context)
                state = .challenge(from: at)
            case .challenge(let mark):
                guard let end = find("</challenge>", from: mark) else { return }
                sendResponse(context, mark: mark, end: end)
                state = .success(from: end)
            case .success(let mark):
                guard let end = find("</success>", from: mark) else { return }
                verifySuccess(mark: mark, end: end)
                send(context, floor.header)
                state = .restartedFeatures(from: end)
            case .restartedFeatures(let from):
                guard let at = find("</stream:features>", from: from) else { return }
                send(context, floor.bind)
                state = .bound(from: at)
            case .bound(let from):
                guard let at = find("</iq>", from: from) else { return }
                send(context, floor.roster)
                state = .rosterID(from: at)
            case .rosterID(let from):
                guard let at = find("id='q1'", from: from) else { return }
                state = .rosterEnd(from: at)
            case .rosterEnd(let from):
                guard let at = find("</iq>", from: from) else { return }
                send(context, floor.presence)
                state = .presence(from: at)
            case .presence(let from):
                // The server's echo of our own presence: the first <presence after this point whose from is us.
                guard let p = find("<presence", from: from) else { return }
                state = .presenceEnd(from: p)
            case .presenceEnd(let p):
                guard let end = find(">", from: p) else { return }
                if input.offset(after: own, from: p, to: end) != nil {
                    send(context, floor.goodbye)
                    state = .closing  // until the server closes
                } else {
                    state = .presence(from: end)
                }
            case .closing:
                return
            }
        }
    }

    private func sendAuth(_ context: ChannelHandlerContext) {
        firstBare = bytes("n=user\(user),r=") + base64(floor.random.bytes(18))
        let encoded = base64(bytes("n,,") + firstBare)
        send(context, bytes("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>"), encoded, bytes("</auth>"))
    }

    /// The payload of `<tag …>payload</tag>` whose end tag ends at `end`, searched from `mark` as the C code does.
    private func payload(open: StaticString, closeLength: Int, mark: Int, end: Int, or problem: String) -> [UInt8] {
        guard let tag = input.offset(after: open, from: mark, to: end),
            let start = input.offset(after: ">", from: tag),
            start <= end - closeLength
        else { die(problem) }
        return input.withUnsafeReadableBytes { unbase64(UnsafeRawBufferPointer(rebasing: $0[start..<(end - closeLength)])) }
    }

    private func sendResponse(_ context: ChannelHandlerContext, mark: Int, end: Int) {
        let serverFirst = payload(open: "<challenge", closeLength: 12, mark: mark, end: end, or: "no <challenge>")
        if serverFirst.isEmpty || serverFirst.count >= 512 { die("bad challenge") }
        guard let r = search(serverFirst, "r="), let s = search(serverFirst, ",s="), let i = search(serverFirst, ",i="),
            s >= r + 2
        else { die("bad server-first-message", String(decoding: serverFirst, as: UTF8.self)) }
        guard i >= s + 3, i - (s + 3) < 256 else { die("salt too long") }
        let saltB64 = Array(serverFirst[(s + 3)..<i])
        var iterations: Int32 = 0  // atoi
        for digit in serverFirst[(i + 3)...] {
            guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { break }
            iterations = iterations &* 10 &+ Int32(digit - UInt8(ascii: "0"))
        }
        if iterations != floor.cachedIterations || saltB64 != floor.cachedSalt {
            let salt = saltB64.withUnsafeBytes { unbase64($0) }
            let password = floor.server.password
            var salted = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
            guard
                PKCS5_PBKDF2_HMAC(
                    password, Int32(password.utf8.count), salt, Int32(salt.count), iterations, EVP_sha1(), SHA_DIGEST_LENGTH,
                    &salted) == 1
            else { die("PBKDF2 failed") }
            floor.clientKey = hmacSHA1(key: salted, bytes("Client Key"))
            var stored = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
            var length: UInt32 = 0
            guard EVP_Digest(floor.clientKey, floor.clientKey.count, &stored, &length, EVP_sha1(), nil) == 1 else {
                die("SHA-1 failed")
            }
            floor.storedKey = stored
            floor.serverKey = hmacSHA1(key: salted, bytes("Server Key"))
            floor.cachedSalt = saltB64
            floor.cachedIterations = iterations
        }
        let finalBare = bytes("c=biws,r=") + serverFirst[(r + 2)..<s]
        let authMessage = firstBare + [UInt8(ascii: ",")] + serverFirst + [UInt8(ascii: ",")] + finalBare
        let signature = hmacSHA1(key: floor.storedKey, authMessage)
        serverSignature = hmacSHA1(key: floor.serverKey, authMessage)
        var proof = floor.clientKey
        for index in proof.indices { proof[index] ^= signature[index] }
        let encoded = base64(finalBare + bytes(",p=") + base64(proof))
        send(context, bytes("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>"), encoded, bytes("</response>"))
    }

    private func verifySuccess(mark: Int, end: Int) {
        let raw = payload(open: "<success", closeLength: 10, mark: mark, end: end, or: "no <success>")
        // SCRAMClient.verifyServerFinal: v=base64(ServerSignature), decoded and compared in constant time.
        guard raw.count >= 3, raw.starts(with: bytes("v=")) else { die("server signature mismatch") }
        let got = raw.withUnsafeBytes { unbase64(UnsafeRawBufferPointer(rebasing: $0[2...])) }
        var difference: UInt8 = got.count == serverSignature.count ? 0 : 1
        for index in 0..<min(got.count, serverSignature.count) { difference |= got[index] ^ serverSignature[index] }
        guard difference == 0 else { die("server signature mismatch") }
    }
}

// MARK: - message: message-floor's loop

struct MessageConfig: Sendable {
    var sender: Int
    var receiver: Int
    var count: Int
}

final class MessageFloor: Floor {
    let config: MessageConfig
    let bind = fixed("<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>load</resource></bind></iq>")
    let presence = fixed("<presence/>")
    let close = fixed("</stream:stream>")
    /// The message to the second account and to the first, up to the stamp's sender serial.
    private let toSecond: String
    private let toFirst: String
    /// The stamp's run id (xmppload's length) and clock origin: 2 s back, so times have xmppload's 10 digits.
    private let run: String
    private let origin = NIODeadline.now() - .seconds(2)
    private var sender: MessageConnection?
    private var receiver: MessageConnection?
    /// The connection being waited on (C's `c` in `wait_for`); what the other one reads is dropped.
    private(set) var awaitedConnection: MessageConnection?
    private(set) var finished = false
    private var k = 0

    init(server: Server, config: MessageConfig, loop: EventLoop, done: EventLoopPromise<Figures>) {
        self.config = config
        func start(_ user: Int) -> String {
            "<message to='user\(user)@\(server.domain)' type='chat'><body>xmppload-filler-0123</body>"
                + "<stamp xmlns='urn:xmppload:stamp:0' r='"
        }
        self.toSecond = start(config.receiver)
        self.toFirst = start(config.sender)
        var wall = time(nil)
        var date = tm()
        gmtime_r(&wall, &date)
        var text = [CChar](repeating: 0, count: 32)
        strftime(&text, text.count, "%Y%m%d-%H%M%S-floor00", &date)
        self.run = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        super.init(server: server, loop: loop, done: done)
    }

    override func makeConnection() -> any ChannelHandler {
        let connection = MessageConnection(floor: self, user: sender == nil ? config.sender : config.receiver)
        if sender == nil { sender = connection } else { receiver = connection }
        awaitedConnection = connection
        return connection
    }

    override var awaited: String { awaitedConnection?.awaited ?? "" }

    /// The connection a message was just sent to is the one waited on now.
    func awaiting(_ connection: MessageConnection) {
        awaitedConnection = connection
    }

    func begin() {
        startWatchdog()
        connect()
    }

    /// A connection has seen its own presence echoed: log in the receiver, or start the messages.
    func loggedIn(_ connection: MessageConnection) {
        if connection === sender {
            connect()
            return
        }
        startMeasuring()
        sendMessage()
    }

    /// Message k: even k from the first connection (serial 0) to the second, odd k back; sequences
    /// count from 1 per sender.
    private func sendMessage() {
        guard let sender, let receiver else { return }
        let (from, to, start) = k % 2 == 0 ? (sender, receiver, toSecond) : (receiver, sender, toFirst)
        let sent = String((NIODeadline.now() - origin).nanoseconds)
        var buffer = from.allocator.buffer(capacity: start.utf8.count + 128)
        buffer.writeString(start)
        buffer.writeString(run)
        buffer.writeStaticString("' s='")
        buffer.writeString(String(k % 2))
        buffer.writeStaticString("' q='")
        buffer.writeString(String(k / 2 + 1))
        buffer.writeStaticString("' t='")
        buffer.writeString(sent)
        buffer.writeStaticString("' i='")
        buffer.writeString(sent)
        buffer.writeStaticString("'/></message>")
        from.send(buffer)
        to.awaitMessage()
    }

    /// The connection awaited has read message k's `</message>`.
    func messageArrived() {
        k += 1
        if k < config.count {
            sendMessage()
            return
        }
        finish(count: k)
        finished = true
        waiting = false
        sender?.send(close)
        receiver?.send(close)
        sender?.closeChannel()
        receiver?.closeChannel()
    }
}

/// One of message-floor's two connections: SASL PLAIN login, then (the receiver) counting `</message>`.
final class MessageConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case features
        case success
        case restartedFeatures
        case bound
        case ownPresence
        case loggedIn
        case message
    }

    private let floor: MessageFloor
    private let user: Int
    private let own: [UInt8]
    private var input = ByteBuffer()
    private var state = State.features
    private var context: ChannelHandlerContext?

    init(floor: MessageFloor, user: Int) {
        self.floor = floor
        self.user = user
        self.own = bytes("from='user\(user)@\(floor.server.domain)/load'")
    }

    var allocator: ByteBufferAllocator { context!.channel.allocator }

    var awaited: String {
        switch state {
        case .features, .restartedFeatures: "</stream:features>"
        case .success: "<success"
        case .bound: "</iq>"
        case .ownPresence: String(decoding: own, as: UTF8.self)
        case .message: "</message>"
        case .loggedIn: "nothing"
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        input = context.channel.allocator.buffer(capacity: 4096)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        send(floor.header)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        floor.reads += 1
        guard floor.awaitedConnection === self else {
            input.clear()  // the other connection's stanzas (a contact's presence): not waited for
            return
        }
        var bytes = unwrapInboundIn(data)
        input.writeBuffer(&bytes)
        if input.readableBytes >= 65535 { die("more than 64 KiB unconsumed") }
        advance()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !floor.finished { die("read failed or the server closed waiting for", floor.awaited) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if !floor.finished { die("read failed", "\(error)") }
    }

    func send(_ buffer: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func closeChannel() {
        context?.close(promise: nil)
    }

    /// This connection waits for the message just sent to it.
    func awaitMessage() {
        floor.awaiting(self)
        state = .message
        advance()
    }

    /// C's `wait_for(c, needle)`: true, with everything up to and including the needle dropped, once it is there.
    private func consume(_ needle: StaticString) -> Bool {
        if let used = input.offset(after: needle, from: 0) {
            consumed(used)
            return true
        }
        return refused()
    }

    private func consume(_ needle: [UInt8]) -> Bool {
        if let used = input.offset(after: needle, from: 0) {
            consumed(used)
            return true
        }
        return refused()
    }

    private func consumed(_ used: Int) {
        input.moveReaderIndex(forwardBy: used)
        input.discardReadBytes()
    }

    private func refused() -> Bool {
        if input.offset(after: "<failure", from: 0) != nil || input.offset(after: "<stream:error", from: 0) != nil {
            die("the server refused", input.text(from: 0))
        }
        return false
    }

    private func advance() {
        while true {
            switch state {
            case .features:
                guard consume("</stream:features>") else { return }
                var plain: [UInt8] = [0]
                plain += bytes("user\(user)")
                plain.append(0)
                plain += bytes(floor.server.password)
                var buffer = allocator.buffer(capacity: 256)
                buffer.writeStaticString("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>")
                buffer.writeBytes(base64(plain))
                buffer.writeStaticString("</auth>")
                send(buffer)
                state = .success
            case .success:
                guard consume("<success") else { return }
                send(floor.header)
                state = .restartedFeatures
            case .restartedFeatures:
                guard consume("</stream:features>") else { return }
                send(floor.bind)
                state = .bound
            case .bound:
                guard consume("</iq>") else { return }
                send(floor.presence)
                state = .ownPresence
            case .ownPresence:
                // The server's echo of our own initial presence.
                guard consume(own) else { return }
                state = .loggedIn
                floor.loggedIn(self)
                return
            case .message:
                guard consume("</message>") else { return }
                state = .loggedIn
                floor.messageArrived()
                return
            case .loggedIn:
                return
            }
        }
    }
}

// MARK: - Command line

@main
enum NIOFloor {
    static let usage =
        "usage: nio-floor login HOST PORT DOMAIN PASSWORD FIRST COUNT RATE | nio-floor message HOST PORT DOMAIN PASSWORD SENDER RECEIVER COUNT"

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 9, arguments[1] == "login" || arguments[1] == "message" else { die(usage) }
        guard let port = Int(arguments[3]), let address = try? SocketAddress(ipAddress: arguments[2], port: port),
            case .v4 = address
        else { die("HOST must be an IPv4 address and PORT a port", arguments[2] + " " + arguments[3]) }
        let numbers = arguments[6...].map { Int($0) ?? 0 }
        let server = Server(address: address, domain: arguments[4], password: arguments[5])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let done = loop.makePromise(of: Figures.self)
        if arguments[1] == "login" {
            let config = LoginConfig(first: numbers[0], count: numbers[1], rate: Double(arguments[8]) ?? 0)
            if config.first < 1 || config.count < 1 || !(config.rate > 0) {
                die("FIRST and COUNT must be at least 1, RATE above 0")
            }
            loop.execute { LoginFloor(server: server, config: config, loop: loop, done: done).begin() }
        } else {
            let config = MessageConfig(sender: numbers[0], receiver: numbers[1], count: numbers[2])
            if config.sender < 1 || config.receiver < 1 || config.sender == config.receiver || config.count < 1 {
                die("SENDER and RECEIVER must be different account numbers of at least 1, COUNT at least 1")
            }
            loop.execute { MessageFloor(server: server, config: config, loop: loop, done: done).begin() }
        }
        do {
            try done.futureResult.wait().print()
            try group.syncShutdownGracefully()
        } catch {
            die("\(error)")
        }
    }
}
