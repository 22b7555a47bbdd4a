import NIOCore

/// One event loop's reusable byte array for serializing outbound elements before they are copied into
/// the `ByteBuffer` that is written. Its capacity (the largest stanza written so far) stays with the
/// loop rather than with each connection, which would cost every idle session its largest stanza, and
/// a write allocates only its `ByteBuffer` instead of a growing array as well.
///
/// Loop-bound: used only on its loop and only inside one `encode` call (filling it writes nothing, so
/// no other handler runs in between).
final class OutboundScratch {
    private var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(512)
    }

    /// `fill` appends the serialized unit to the emptied scratch; returns it as a new buffer from `allocator`.
    func encode(allocator: ByteBufferAllocator, _ fill: (inout [UInt8]) -> Void) -> ByteBuffer {
        bytes.removeAll(keepingCapacity: true)
        fill(&bytes)
        return allocator.buffer(bytes: bytes)
    }
}
