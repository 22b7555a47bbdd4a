import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy for tests: listens on 127.0.0.1:`port` and forwards every connection to
/// 127.0.0.1:`upstreamPort`, holding each server→client chunk back `delay` before passing it on
/// (client→server bytes pass at once). It makes a real server measurably slower without touching it:
/// every round trip of a login (stream features, TLS flights, SASL, bind) costs at least `delay`
/// more. Chunks that arrive during a hold are passed on together after it, so a chunk waits between
/// `delay` and twice that.
///
/// Plain blocking sockets, one thread per direction of each connection (tests use a few hundred
/// connections at most). `cutAll()` cuts every open connection (both sides see the stream end), for
/// tests of reconnection; `stop()` also closes the listener.
///
/// `admission` gives the proxy a known capacity for new connections: `.wait(perSecond: R)` admits
/// at most R per second, evenly spaced, and makes the rest wait in the listen backlog (their TCP
/// connect completes, the server answers them only when admitted); `.refuseAbove(perSecond: C)`
/// breaks when more than C connections arrive within one second: from then until 2 s after the
/// last such second every new connection is closed at once (a server that falls over past a rate).
final class DelayProxy: @unchecked Sendable {
    // @unchecked: `connections` and `stopped` are only touched under `lock`; the sockets themselves
    // are used by their pump threads, and closed once by the last of the two.
    let port: Int
    private let upstreamPort: Int
    private let delayMicroseconds: UInt32
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var stopped = false
    private let admission: Admission
    /// Connections refused so far (`.refuseAbove`).
    private(set) var refused = 0

    /// How new connections are let through.
    enum Admission: Sendable {
        case open
        case wait(perSecond: Double)
        case refuseAbove(perSecond: Double)
    }

    /// Both sockets of one proxied connection; closed when both directions ended.
    private final class Connection: @unchecked Sendable {
        // @unchecked: `running` is only changed under the proxy's lock.
        let client: Int32
        let upstream: Int32
        var running = 2
        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }
    }

    init(upstreamPort: Int, delay: Duration, admission: Admission = .open) throws {
        self.upstreamPort = upstreamPort
        self.admission = admission
        delayMicroseconds = UInt32(delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DelayProxyError(message: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1024) == 0 else {
            close(fd)
            throw DelayProxyError(message: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Cuts every open connection: both the client and the server see the stream end.
    func cutAll() {
        lock.lock()
        let open = Array(connections.values)
        lock.unlock()
        for connection in open {
            shutdown(connection.client, Int32(SHUT_RDWR))
            shutdown(connection.upstream, Int32(SHUT_RDWR))
        }
    }

    /// Stops accepting and cuts every connection.
    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        cutAll()
    }

    deinit { stop() }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private func acceptLoop() {
        var nextSlot = 0.0
        var arrivals: [Double] = []
        var brokenUntil = 0.0
        let clock = ContinuousClock()
        let origin = clock.now
        func now() -> Double {
            let elapsed = (clock.now - origin).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                lock.lock()
                let done = stopped
                lock.unlock()
                if done || (errno != EINTR && errno != ECONNABORTED) { return }
                continue
            }
            switch admission {
            case .open:
                break
            case .wait(let perSecond):
                // A client that gave up while it waited in the backlog takes no slot.
                var probe: UInt8 = 0
                if recv(client, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0 {
                    close(client)
                    continue
                }
                // Admit at the next free slot; later connections wait in the backlog meanwhile.
                let slot = max(now(), nextSlot)
                nextSlot = slot + 1 / perSecond
                let wait = slot - now()
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            case .refuseAbove(let perSecond):
                let time = now()
                arrivals.append(time)
                arrivals.removeAll { $0 < time - 1 }
                if Double(arrivals.count) > perSecond { brokenUntil = time + 2 }
                if time < brokenUntil {
                    lock.lock()
                    refused += 1
                    lock.unlock()
                    close(client)
                    continue
                }
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(upstreamPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard upstream >= 0, connected == 0 else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            var yes: Int32 = 1
            for fd in [client, upstream] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size)) }
            let connection = Connection(client: client, upstream: upstream)
            lock.lock()
            connections[ObjectIdentifier(connection)] = connection
            lock.unlock()
            Thread { [self] in pump(connection, from: client, to: upstream, delay: 0) }.start()
            Thread { [self] in pump(connection, from: upstream, to: client, delay: delayMicroseconds) }.start()
        }
    }

    /// Copies bytes one way until either side ends, then ends both; the last direction to finish
    /// closes the sockets.
    private func pump(_ connection: Connection, from source: Int32, to destination: Int32, delay: UInt32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            if delay > 0 { usleep(delay) }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break loop }
                sent += written
            }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        lock.lock()
        connection.running -= 1
        let last = connection.running == 0
        if last { connections[ObjectIdentifier(connection)] = nil }
        lock.unlock()
        if last {
            close(connection.client)
            close(connection.upstream)
        }
    }
}

struct DelayProxyError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
