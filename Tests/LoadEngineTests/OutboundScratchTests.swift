import NIOCore
import NIOEmbedded
import Testing

@testable import LoadEngine

/// `OutboundScratch` reuses its `ByteBuffer` only when no channel still holds the last one, and never
/// changes bytes already handed out.
@Suite struct OutboundScratchTests {
    let allocator = ByteBufferAllocator()

    private func encode(_ scratch: OutboundScratch, _ text: String) -> ByteBuffer {
        scratch.encode(allocator: allocator) { $0.append(contentsOf: Array(text.utf8)) }
    }

    private func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { $0.baseAddress }
    }

    @Test func aReleasedBufferIsReused() {
        let scratch = OutboundScratch()
        let first = address(encode(scratch, "<presence/>"))
        let second = encode(scratch, "<message><body>hi</body></message>")
        #expect(address(second) == first, "the first buffer was dropped, so its storage comes back")
        #expect(String(buffer: second) == "<message><body>hi</body></message>")
    }

    @Test func aBufferStillHeldIsNeitherReusedNorChanged() {
        let scratch = OutboundScratch()
        let held = encode(scratch, "<presence/>")
        let next = encode(scratch, "<iq type='get' id='1'/>")
        #expect(String(buffer: held) == "<presence/>")
        #expect(String(buffer: next) == "<iq type='get' id='1'/>")
        #expect(address(next) != address(held))
    }

    @Test func aQueuedWriteKeepsItsBytesThroughLaterEncodes() throws {
        // Writes queued until a flush: the channel holds every buffer, each keeps its own bytes.
        let channel = EmbeddedChannel()
        let scratch = OutboundScratch()
        for index in 0..<3 {
            channel.write(encode(scratch, "<m id='\(index)'/>"), promise: nil)
        }
        channel.flush()
        for index in 0..<3 {
            let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(String(buffer: written) == "<m id='\(index)'/>")
        }
        _ = try channel.finish()
    }

    @Test func aBufferFarLargerThanTheUnitIsNotReused() {
        let scratch = OutboundScratch()
        let large = String(repeating: "x", count: 3 * OutboundScratch.reuseCapacity)
        let first = address(encode(scratch, large))
        let small = encode(scratch, "<a/>")
        #expect(address(small) != first)
        #expect(small.capacity <= OutboundScratch.reuseCapacity)
    }

    /// A unit that will wait in a channel's queue (`held`) gets a buffer of its own size, not a
    /// copy of the loop's buffer at the loop's capacity, and leaves the loop's buffer to be reused.
    @Test func aHeldUnitGetsABufferOfItsOwnSize() {
        let scratch = OutboundScratch()
        let large = String(repeating: "x", count: OutboundScratch.reuseCapacity - 16)
        let loopBuffer = address(encode(scratch, large))
        let answer = "<iq type='result' id='p' to='load.test'/>"
        var queued: [ByteBuffer] = []
        for _ in 0..<100 {
            queued.append(scratch.encode(allocator: allocator, held: true) { $0.append(contentsOf: Array(answer.utf8)) })
        }
        #expect(queued.allSatisfy { String(buffer: $0) == answer })
        #expect(queued.allSatisfy { $0.capacity < 2 * answer.utf8.count }, "\(queued.map(\.capacity).max() ?? 0) bytes for \(answer.utf8.count)")
        #expect(address(encode(scratch, "<a/>")) == loopBuffer, "the loop's buffer was left free")
    }
}
