import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP endpoint that misbehaves on purpose, for the monitor's hostile-source tests: it
/// accepts on 127.0.0.1 (a free port), reads the request line and headers, then runs `respond` with
/// the connection's descriptor on a thread of its own and closes it. Stopped by `stop()` (its
/// listening socket closed; connections still in `respond` end when it returns).
final class TinyHTTPServer: @unchecked Sendable {
    // @unchecked: `listener` is set once in init; `stopped` is only read by the accept thread after
    // `stop()` closed the socket it blocks on.
    let port: Int
    private let listener: Int32
    private let respond: @Sendable (Int32) -> Void

    init(respond: @escaping @Sendable (Int32) -> Void) throws {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [listener, respond] in
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 { return }
                Thread {
                    Self.readRequest(connection)
                    respond(connection)
                    close(connection)
                }.start()
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Reads until the blank line that ends the request's headers (or 16 KiB, or the close).
    static func readRequest(_ fd: Int32) {
        var seen: [UInt8] = []
        var byte: UInt8 = 0
        while seen.count < 16_384, recv(fd, &byte, 1, 0) == 1 {
            seen.append(byte)
            if seen.suffix(4) == [0x0D, 0x0A, 0x0D, 0x0A] { return }
        }
    }

    /// Writes all of `text`; false when the peer went away.
    @discardableResult
    static func write(_ fd: Int32, _ text: String) -> Bool { write(fd, Array(text.utf8)) }

    @discardableResult
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// A port on 127.0.0.1 where nothing listens (bound, then closed).
    static func closedPort() -> Int {
        guard let server = try? TinyHTTPServer(respond: { _ in }) else { return 9 }
        let port = server.port
        server.stop()
        return port
    }
}
