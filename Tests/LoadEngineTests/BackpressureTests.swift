import NIOCore
import NIOEmbedded
import Testing

@testable import LoadEngine

/// Bounded cost under hostile reads, on the pipeline: a session whose channel does not drain holds
/// back its reads until it drains (the server's flood waits in TCP, not in the generator), and the
/// byte counter counts a non-draining channel's writes with one promise per flush, not per write.
@Suite struct BackpressureTests {
    /// Counts the reads that reach the bottom of the pipeline (the socket).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test func readsWaitWhileTheChannelDoesNotDrain() throws {
        let harness = try SessionPipelineTests.idleAndLoggedIn()
        let counter = ReadCounter()
        try harness.channel.pipeline.syncOperations.addHandler(counter, position: .first)
        harness.channel.read()
        #expect(counter.reads == 1)
        // The server stops reading: the channel is not writable; reads are held back.
        harness.channel.isWritable = false
        harness.channel.pipeline.fireChannelWritabilityChanged()
        harness.channel.read()
        harness.channel.read()
        #expect(counter.reads == 1)
        // What was read before is still answered (queued, bounded by the write-stall limits).
        try harness.serverSends("<iq type='get' id='p1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(String(decoding: try harness.clientBytes(), as: UTF8.self).contains("id='p1'"))
        // It drains: the held-back read goes on, once.
        harness.channel.isWritable = true
        harness.channel.pipeline.fireChannelWritabilityChanged()
        #expect(counter.reads == 2)
        harness.channel.read()
        #expect(counter.reads == 3)
        #expect(!harness.isEnded)
    }

    /// Records what the counter reports.
    final class Sink: ByteCountSink {
        var sent: [Int] = []
        var received = 0
        func received(_ byteCount: Int) { received += byteCount }
        func sent(_ byteCount: Int) { sent.append(byteCount) }
    }

    @Test func writesToAChannelThatDoesNotDrainAreCountedOncePerFlushWhenTheyLeave() throws {
        let channel = EmbeddedChannel()
        let sink = Sink()
        try channel.pipeline.syncOperations.addHandler(WireByteCounter(sink: sink))
        channel.write(channel.allocator.buffer(string: "12345"), promise: nil)
        #expect(sink.sent == [5], "a draining channel's write is counted at once")
        channel.isWritable = false
        for text in ["abc", "defg", "hi"] { channel.write(channel.allocator.buffer(string: text), promise: nil) }
        #expect(sink.sent == [5], "queued, not sent: not counted yet")
        channel.flush()
        #expect(sink.sent == [5, 9], "the three left together: counted once")
        var written: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { written.append(String(buffer: buffer)) }
        #expect(written == ["12345", "abc", "defg", "hi", ""], "one empty marker write per flush")
        channel.flush()
        #expect(sink.sent == [5, 9], "a flush with nothing uncounted adds no marker")
        _ = try channel.finish()
    }
}
