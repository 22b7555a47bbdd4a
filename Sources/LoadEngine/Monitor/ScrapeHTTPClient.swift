import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 GET for one scrape, on plain sockets with `poll(2)` deadlines: connect,
/// request and the whole response within `ScrapeLimits.timeout`, the response within
/// `maxHeaderBytes + maxBodyBytes` (chunked framing included), `Connection: close`, no compression.
///
/// Why plain sockets on the monitor's own thread and not NIO: a scrape must never share an event
/// loop with the load (a 4 MiB body parsed on a loop would delay sessions), a second NIO group would
/// add threads and an HTTP pipeline for one request per interval, and a blocking socket with one
/// deadline bounds time and memory in a few dozen lines whose every exit is visible.
/// Name resolution (`getaddrinfo`) is not bounded by the deadline: give an address to bound it.
enum ScrapeHTTPClient {
    /// Why a scrape got no body.
    enum Failure: Error, Sendable, Equatable {
        case unreachable(String)
        case timeout(String)
        case status(Int)
        case tooLarge(String)
        case malformed(String)
    }

    /// The body of `GET target` from `host:port`.
    static func get(host: String, port: Int, target: String, limits: ScrapeLimits) -> Result<[UInt8], Failure> {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(limits.timeout * 1e9))
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.unreachable("cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var lastFailure = Failure.unreachable("no address for \(host)")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            switch connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, host: host, port: port, deadline: deadline) {
            case .failure(let failure):
                lastFailure = failure
                if case .timeout = failure { return .failure(failure) }
                continue
            case .success:
                return exchange(fd, host: host, port: port, target: target, limits: limits, deadline: deadline)
            }
        }
        return .failure(lastFailure)
    }

    private static func connect(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, host: String, port: Int, deadline: NIODeadline
    ) -> Result<Void, Failure> {
        let where_ = "\(host):\(port)"
        switch DeadlineSocket.connect(fd, address, length, until: deadline) {
        case .done: break
        case .timedOut: return .failure(.timeout("no connection within the time limit (\(where_))"))
        case .failed(let code): return .failure(.unreachable("\(String(cString: strerror(code))) (\(where_))"))
        }
        return .success(())
    }

    private static func exchange(
        _ fd: Int32, host: String, port: Int, target: String, limits: ScrapeLimits, deadline: NIODeadline
    ) -> Result<[UInt8], Failure> {
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        let request = Array(
            ("GET \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: xmppload-monitor\r\n"
                + "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
                + "Accept-Encoding: identity\r\nConnection: close\r\n\r\n").utf8)
        switch DeadlineSocket.send(request, on: fd, until: deadline) {
        case .done: break
        case .timedOut: return .failure(.timeout("the request could not be sent in time"))
        case .failed(let code): return .failure(.unreachable("sending the request: \(String(cString: strerror(code)))"))
        }
        let cap = limits.maxHeaderBytes + limits.maxBodyBytes + limits.maxBodyBytes / 8
        var response = HTTPResponseReader(limits: limits)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let done = response.outcome { return done }
            guard DeadlineSocket.wait(fd, for: Int16(POLLIN), until: deadline) else {
                return .failure(.timeout("no complete response within \(formatSeconds(limits.timeout)) (\(response.received) bytes read)"))
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return .failure(.unreachable("reading the response: \(String(cString: strerror(errno)))"))
            }
            if count == 0 { return response.finish() }
            if response.received + count > cap {
                return .failure(.tooLarge("the response is larger than \(limits.bodyLimitText)"))
            }
            response.append(buffer[0..<count])
        }
    }

    static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
