import NIOCore

/// One event loop's reusable byte array for serializing outbound elements, and the `ByteBuffer` they
/// are written from. The array's capacity (the largest stanza written so far) stays with the loop
/// rather than with each connection, which would cost every idle session its largest stanza.
///
/// The buffer is reused too: a write that the channel completes at once (a flushed write on a socket
/// with room, the usual case) hands the storage back, so the next `encode` on this loop writes into
/// it without allocating (a `ByteBuffer` costs two allocations, its storage object and its bytes).
/// While a channel still holds the last buffer (writes queued until a flush, a full socket),
/// `ByteBuffer`'s copy-on-write gives the next one fresh storage, so nothing written is ever
/// overwritten. A buffer much larger than the unit is not reused, so a queued write never pins more
/// than about twice its bytes (or `reuseCapacity`).
///
/// A unit the caller knows will be queued (`held`: written during a read, flushed only at its end,
/// or on a channel that does not drain) gets a buffer of its own size instead: the copy-on-write
/// copy of the loop's buffer would have the loop's capacity (512 B to 4 KiB) for an answer of ~60
/// bytes, and a server that floods pings and never reads made thousands of those wait in NIO's queue.
///
/// Loop-bound: used only on its loop and only inside one `encode` call (filling it writes nothing, so
/// no other handler runs in between).
package final class OutboundScratch {
    private var bytes: [UInt8] = []
    private var buffer: ByteBuffer?

    /// Capacity up to which the buffer is reused whatever the unit's size, in bytes.
    package static let reuseCapacity = 4096
    /// Capacity of a new buffer, in bytes (most stanzas fit, so a reused buffer rarely grows).
    package static let initialCapacity = 512

    package init() {
        bytes.reserveCapacity(Self.initialCapacity)
    }

    /// `fill` appends the serialized unit to the emptied scratch; returns it in a buffer (the loop's
    /// reused one when it is free, else a new one from `allocator`; with `held`, always a new one of
    /// the unit's size, and the loop's buffer is left as it is).
    package func encode(allocator: ByteBufferAllocator, held: Bool = false, _ fill: (inout [UInt8]) -> Void) -> ByteBuffer {
        bytes.removeAll(keepingCapacity: true)
        fill(&bytes)
        if held {
            var out = allocator.buffer(capacity: bytes.count)
            out.writeBytes(bytes)
            return out
        }
        // `take()` leaves `out` the only reference of ours, so the storage is unique unless a channel
        // still holds the last unit.
        if var out = buffer.take(), out.capacity <= max(Self.reuseCapacity, 2 * bytes.count) {
            out.clear()  // copy-on-write: fresh storage when a channel still holds the last unit
            out.writeBytes(bytes)
            buffer = out
            return out
        }
        var out = allocator.buffer(capacity: max(Self.initialCapacity, bytes.count))
        out.writeBytes(bytes)
        buffer = out
        return out
    }
}
