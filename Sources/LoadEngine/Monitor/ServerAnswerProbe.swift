import NIOCore
import XMPPCore

#if canImport(Glibc)
import Glibc
#endif

/// How long a new client connection waits for the server's first answer: connect, send a stream
/// header, time until the first byte of the server's reply. A server (or anything in front of it)
/// still working off a backlog of connections answers late, an idle one within milliseconds, so
/// `capacity` waits between steps until this is back near its idle level (`StepSettling`) — the
/// backlog is then drained wherever it queued (the server's accept queue, its own work, a proxy).
///
/// Plain TCP endpoints only (STARTTLS or none: the server speaks first after our header); nil for
/// direct TLS and web transports, which would need a handshake. Blocking (name resolution, one
/// connection bounded by `timeout`): call it off the event loops. Nothing is parsed: the probe
/// only waits for bytes, and closes.
public struct ServerAnswerProbe: Sendable {
    public let host: String
    public let port: Int
    public let domain: String
    /// Seconds a look waits for the answer; a look that gets none counts as this long.
    public var timeout: Double

    public init(host: String, port: Int, domain: String, timeout: Double = 5) {
        self.host = host
        self.port = port
        self.domain = domain
        self.timeout = timeout
    }

    /// The probe of a run's first endpoint; nil when it is not plain TCP with a stream header first.
    public init?(configuration: RunConfiguration, timeout: Double = 5) {
        if let first = configuration.endpoints.first, first.transport != .tcp { return nil }
        guard configuration.tls != .direct, configuration.port > 0, !configuration.host.isEmpty else { return nil }
        self.init(host: configuration.host, port: configuration.port, domain: configuration.domain, timeout: timeout)
    }

    /// Milliseconds from connecting to the server's first byte; `timeout` × 1000 when it did not
    /// answer in time or refused (a server that does not answer is not settled).
    public func look() -> Double {
        let started = NIODeadline.now()
        let deadline = started + .nanoseconds(Int64(timeout * 1e9))
        let limit = timeout * 1000
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else { return limit }
        defer { freeaddrinfo(list) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return limit }
        defer { close(fd) }
        guard DeadlineSocket.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, until: deadline) == .done,
            DeadlineSocket.send(Stanza.streamHeader(to: domain), on: fd, until: deadline) == .done
        else { return limit }
        var byte: UInt8 = 0
        while true {
            guard DeadlineSocket.wait(fd, for: Int16(POLLIN), until: deadline) else { return limit }
            let count = recv(fd, &byte, 1, 0)
            if count > 0 { return Double((NIODeadline.now() - started).nanoseconds) / 1e6 }
            if count == 0 { return limit }
            if errno != EAGAIN && errno != EINTR { return limit }
        }
    }
}
