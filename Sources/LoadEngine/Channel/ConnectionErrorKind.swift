import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Maps transport-level errors to the typed error kinds counted in results (measurement rule 8).
///
/// Kinds: `connect-refused`, `connect-timeout`, `connection-reset`, `fd-exhausted` (EMFILE/ENFILE),
/// `addr-not-available` (EADDRNOTAVAIL: out of ephemeral ports), `network-unreachable`, `tls`,
/// `io-<errno>` for any other errno, `bootstrap-no-session` (an internal invariant broke),
/// `connection-other` for anything else.
enum ConnectionErrorKind {
    static func kind(of error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return kind(of: first.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError { return kind(of: dns) }
            return "connect-failed"
        }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return "connect-timeout"
            case .eof, .alreadyClosed, .ioOnClosedChannel, .outputClosed, .inputClosed: return "connection-closed"
            default: return "connection-other"
            }
        }
        if let error = error as? IOError { return kind(errno: error.errnoCode) }
        if error is NIOSSLError || error is BoringSSLError { return "tls" }
        if error is SessionBootstrapError { return "bootstrap-no-session" }
        return "connection-other"
    }

    static func kind(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: return "connect-refused"
        case ETIMEDOUT: return "connect-timeout"
        case ECONNRESET, EPIPE: return "connection-reset"
        case EMFILE, ENFILE: return "fd-exhausted"
        case EADDRNOTAVAIL, EADDRINUSE: return "addr-not-available"
        case ENETUNREACH, EHOSTUNREACH: return "network-unreachable"
        default: return "io-\(code)"
        }
    }
}
