import NIOCore
import NIOPosix
import NIOSSL
import SessionCore

#if canImport(Glibc)
import Glibc
#endif

/// Maps transport-level errors (NIO, errno, TLS) to the typed `ConnectionFailure` counted in results
/// (measurement rule 8). A certificate that failed verification becomes `.tlsCertificate(problem)`
/// (`TLSSetup.CertificateDiagnosis` names the problem; a name mismatch is NIOSSL's own error).
extension ConnectionFailure {
    package init(_ error: any Error) {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first {
                self.init(first.error)
            } else if let dns = error.dnsAError ?? error.dnsAAAAError {
                self.init(dns)
            } else {
                self = .connectFailed
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: self = .timeout
            case .eof, .alreadyClosed, .ioOnClosedChannel, .outputClosed, .inputClosed: self = .closed
            default: self = .other
            }
        case let error as IOError:
            self.init(errno: error.errnoCode)
        case let error as TLSSetup.CertificateError:
            self = .tlsCertificate(error.problem)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            self = .tlsCertificate(.hostnameMismatch)
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            self = .tls
        case SessionError.connection(let failure):
            self = failure
        default:
            self = .other
        }
    }

    package init(errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case ETIMEDOUT: self = .timeout
        case ECONNRESET, EPIPE: self = .reset
        case EMFILE, ENFILE: self = .descriptorsExhausted
        case EADDRNOTAVAIL, EADDRINUSE: self = .addressNotAvailable
        case ENETUNREACH, EHOSTUNREACH: self = .unreachable
        default: self = .io(errno: code)
        }
    }
}
