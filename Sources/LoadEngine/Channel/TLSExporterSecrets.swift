import NIOCore
import NIOSSL
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TLS 1.3 exporter master secret of the handshake that just completed on each thread, as
/// BoringSSL's key log hands it out (`TLSConfiguration.keyLogCallback`, the line
/// `EXPORTER_SECRET <client random hex> <secret hex>`): NIOSSL has no keying-material exporter, so
/// this is how `tls-exporter` channel binding (RFC 9266) is derived (`ChannelBindingReader`).
///
/// Which connection a line belongs to: BoringSSL logs the exporter secret inside the handshake step
/// that processes the server's Finished, and NIOSSL fires `TLSUserEvent.handshakeCompleted` in that
/// same step, on the same event-loop thread. So the reader takes the secret its own thread logged
/// last, from the `handshakeCompleted` handler, before anything else runs on that thread. (The
/// ClientHello random, the key the line carries, cannot be read reliably: on a live channel NIO adds
/// a handler list in reverse, so TLS writes its ClientHello before a handler below it exists.)
///
/// Only `EXPORTER_SECRET` lines are kept (the traffic secrets the log also carries are dropped at
/// once), one per thread, taken out when read. Thread-safe; bounded by the number of threads.
package final class TLSExporterSecrets: Sendable {
    private let latest = Mutex<[UInt: [UInt8]]>([:])

    package init() {}

    /// The callback for `TLSConfiguration.keyLogCallback`.
    package var keyLogCallback: NIOSSLKeyLogCallback {
        { [self] line in record(line: line) }
    }

    /// Keeps the secret of one `EXPORTER_SECRET` key-log line for the calling thread; ignores every other line.
    package func record(line: ByteBuffer) {
        let label = Self.label
        guard line.readableBytes > label.count, line.readableBytesView.starts(with: label) else { return }
        let fields = line.readableBytesView.dropFirst(label.count).split(whereSeparator: { $0 == 0x20 || $0 == 0x0A })
        guard fields.count == 2, Self.hex(fields[0])?.count == 32, let secret = Self.hex(fields[1]) else { return }
        let thread = Self.currentThread
        latest.withLock { $0[thread] = secret }
    }

    /// The exporter master secret the calling thread's last handshake logged, taken out (a second
    /// call returns nil); nil when none was logged (TLS 1.2, or no key log).
    package func takeForCurrentThread() -> [UInt8]? {
        let thread = Self.currentThread
        return latest.withLock { $0.removeValue(forKey: thread) }
    }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bitPattern: UInt(pthread_self())))) }

    private static let label = Array("EXPORTER_SECRET ".utf8)

    /// Lower- or upper-case hex to bytes; nil for anything else.
    package static func hex(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0, !text.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                out.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return out
    }
}
