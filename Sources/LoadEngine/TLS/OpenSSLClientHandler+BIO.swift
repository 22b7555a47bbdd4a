// The BIO between OpenSSL and the channel: OpenSSL reads the handler's received ciphertext and writes
// into the buffer the handler's next channel write takes.

import CLibSSL
import NIOCore

extension OpenSSLClientHandler {
    /// OpenSSL reads ciphertext: up to `buffer.count` bytes of what was received; 0 when none.
    func bioRead(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard inbound != nil else { return 0 }
        let count = min(inbound!.readableBytes, buffer.count)
        guard count > 0 else { return 0 }
        inbound!.readWithUnsafeReadableBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(count)))
            return count
        }
        return count
    }

    /// OpenSSL writes ciphertext: appended to the buffer the next channel write takes.
    func bioWrite(_ bytes: UnsafeRawBufferPointer) {
        if outbound == nil { outbound = allocator.buffer(capacity: max(bytes.count, 64)) }
        outbound!.writeBytes(bytes)
    }
}

/// The BIO method through which OpenSSL reaches its `OpenSSLClientHandler` (the BIO's data pointer,
/// unretained: the handler owns the SSL object, which owns the BIO).
enum ChannelBIO {
    nonisolated(unsafe) static let method: OpaquePointer = {
        let method = BIO_meth_new(BIO_get_new_index() | xl_BIO_TYPE_SOURCE_SINK(), "xmppload-channel")!
        BIO_meth_set_write_ex(method) { bio, data, length, written in
            guard let bio, let data, let written else { return 0 }
            xl_BIO_clear_retry_flags(bio)
            handler(bio).bioWrite(UnsafeRawBufferPointer(start: data, count: length))
            written.pointee = length
            return 1
        }
        BIO_meth_set_read_ex(method) { bio, data, length, read in
            guard let bio, let data, let read else { return 0 }
            xl_BIO_clear_retry_flags(bio)
            let count = handler(bio).bioRead(into: UnsafeMutableRawBufferPointer(start: data, count: length))
            read.pointee = count
            if count == 0 {
                xl_BIO_set_retry_read(bio)
                return 0
            }
            return 1
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            switch command {
            case xl_BIO_CTRL_FLUSH(), xl_BIO_CTRL_GET_CLOSE(), xl_BIO_CTRL_SET_CLOSE(): return 1
            default: return 0
            }
        }
        BIO_meth_set_create(method) { _ in 1 }
        BIO_meth_set_destroy(method) { bio in
            BIO_set_data(bio, nil)
            BIO_set_init(bio, 0)
            return 1
        }
        return method
    }()

    static func handler(_ bio: OpaquePointer) -> OpenSSLClientHandler {
        Unmanaged<OpenSSLClientHandler>.fromOpaque(BIO_get_data(bio)).takeUnretainedValue()
    }
}
