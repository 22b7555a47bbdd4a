import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import LoadEngine

/// `LoopCallback`: arming, re-arming and cancelling on an `EmbeddedEventLoop` (virtual clock) and on a
/// real loop, and the stale-callback rule as a table.
@Suite struct LoopCallbackTests {
    /// Counts the callbacks that `fired(now:)` accepts.
    final class Owner: NIOScheduledCallbackHandler {
        var callback = LoopCallback()
        var fired: [Int64] = []
        var ranStale = 0

        func handleScheduledCallback(eventLoop: some EventLoop) {
            guard callback.fired(now: eventLoop.now) else {
                ranStale += 1
                return
            }
            fired.append(eventLoop.now.uptimeNanoseconds.milliseconds)
        }
    }

    @Test func firesOnceAtItsDeadline() {
        let loop = EmbeddedEventLoop()
        let owner = Owner()
        let start = loop.now
        owner.callback.arm(at: start + .milliseconds(10), on: loop, handler: owner)
        #expect(owner.callback.isArmed)
        loop.advanceTime(by: .milliseconds(9))
        #expect(owner.fired.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(owner.fired.count == 1)
        #expect(!owner.callback.isArmed)
        loop.advanceTime(by: .seconds(1))
        #expect(owner.fired.count == 1)
    }

    @Test func reArmingReplacesAndCancellingStops() {
        let loop = EmbeddedEventLoop()
        let owner = Owner()
        let start = loop.now
        owner.callback.arm(at: start + .milliseconds(10), on: loop, handler: owner)
        owner.callback.arm(at: start + .milliseconds(20), on: loop, handler: owner)
        loop.advanceTime(by: .milliseconds(15))
        #expect(owner.fired.isEmpty)
        loop.advanceTime(by: .milliseconds(5))
        #expect(owner.fired.count == 1)
        owner.callback.arm(at: loop.now + .milliseconds(10), on: loop, handler: owner)
        owner.callback.cancel()
        loop.advanceTime(by: .seconds(1))
        #expect(owner.fired.count == 1)
        #expect(owner.ranStale == 0)
    }

    /// A callback the loop already took runs even when cancelled; only the armed, due one counts.
    @Test(arguments: [
        // (armed, deadline ms, now ms, counts)
        (false, 10, 20, false),
        (true, 10, 9, false),
        (true, 10, 10, true),
        (true, 10, 11, true),
    ])
    func staleCallbacksAreToldApart(armed: Bool, deadline: Int64, now: Int64, counts: Bool) {
        let loop = EmbeddedEventLoop()
        let owner = Owner()
        if armed { owner.callback.arm(at: .uptimeNanoseconds(UInt64(deadline) * 1_000_000), on: loop, handler: owner) }
        let first = owner.callback.fired(now: .uptimeNanoseconds(UInt64(now) * 1_000_000))
        #expect(first == counts)
        let again = owner.callback.fired(now: .uptimeNanoseconds(UInt64(now) * 1_000_000))
        #expect(!again)
        #expect(owner.callback.isArmed == (armed && !counts))  // a callback not yet due stays armed
    }

    @Test func firesOnARealLoop() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let done = loop.makePromise(of: Int.self)
        final class Counter: NIOScheduledCallbackHandler, @unchecked Sendable {
            var callback = LoopCallback()
            var count = 0
            let done: EventLoopPromise<Int>
            init(done: EventLoopPromise<Int>) { self.done = done }
            func handleScheduledCallback(eventLoop: some EventLoop) {
                guard callback.fired(now: eventLoop.now) else { return }
                count += 1
                if count < 3 {
                    callback.arm(at: eventLoop.now + .milliseconds(2), on: eventLoop, handler: self)
                } else {
                    done.succeed(count)
                }
            }
        }
        let counter = Counter(done: done)
        loop.execute { counter.callback.arm(at: .now() + .milliseconds(2), on: loop, handler: counter) }
        #expect(try done.futureResult.wait() == 3)
    }
}

extension UInt64 {
    fileprivate var milliseconds: Int64 { Int64(self / 1_000_000) }
}
