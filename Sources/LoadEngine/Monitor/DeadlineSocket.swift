import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Blocking socket steps bounded by one deadline, on a non-blocking descriptor with `poll(2)`: the
/// monitor's scrapes (`ScrapeHTTPClient`) and the settling probe (`ServerAnswerProbe`) connect, send
/// and wait the same way, off the event loops.
enum DeadlineSocket {
    /// How a step ended: done, out of time, or a system error (`errno`).
    enum Outcome: Equatable {
        case done
        case timedOut
        case failed(Int32)
    }

    /// Waits until `fd` is ready for `events` or the deadline passes (false).
    static func wait(_ fd: Int32, for events: Int16, until deadline: NIODeadline) -> Bool {
        while true {
            let remaining = (deadline - NIODeadline.now()).nanoseconds
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let result = poll(&entry, 1, Int32(min(remaining / 1_000_000 + 1, Int64(Int32.max))))
            if result > 0 { return true }
            if result < 0 && errno != EINTR { return false }
        }
    }

    /// Connects the non-blocking `fd` to `address`, waiting for the handshake until the deadline.
    static func connect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, until deadline: NIODeadline) -> Outcome {
        guard Glibc.connect(fd, address, length) != 0 else { return .done }
        guard errno == EINPROGRESS else { return .failed(errno) }
        guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return .timedOut }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        return error == 0 ? .done : .failed(error)
    }

    /// Sends all of `bytes` (no SIGPIPE), waiting for room until the deadline.
    static func send(_ bytes: [UInt8], on fd: Int32, until deadline: NIODeadline) -> Outcome {
        var sent = 0
        while sent < bytes.count {
            guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return .timedOut }
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return .failed(errno)
            }
            sent += count
        }
        return .done
    }
}
