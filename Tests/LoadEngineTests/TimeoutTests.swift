import NIOCore
import NIOEmbedded
import Testing

@testable import LoadEngine

/// The per-loop timeout machinery: the pure heap as tables, then `SessionTimeouts` on an
/// `EmbeddedEventLoop` (virtual clock), including lazy cancellation by token.
@Suite struct TimeoutTests {
    @Test(arguments: [
        [5, 3, 9, 1, 7],
        [1, 1, 1, 2, 0],
        [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
        Array(0..<40).map { ($0 * 37) % 41 },
    ])
    func heapPopsInDeadlineOrder(deadlines: [Int]) {
        var heap = DeadlineHeap<Int>()
        for (index, deadline) in deadlines.enumerated() { heap.push(deadline: Int64(deadline), payload: index) }
        #expect(heap.count == deadlines.count)
        #expect(heap.earliest == Int64(deadlines.min()!))
        var popped: [Int64] = []
        while let entry = heap.popDue(now: .max) {
            #expect(deadlines[entry.payload] == Int(entry.deadline))
            popped.append(entry.deadline)
        }
        #expect(popped == deadlines.sorted().map(Int64.init))
        #expect(heap.isEmpty)
    }

    @Test func heapPopsOnlyWhatIsDue() {
        var heap = DeadlineHeap<String>()
        heap.push(deadline: 30, payload: "c")
        heap.push(deadline: 10, payload: "a")
        heap.push(deadline: 20, payload: "b")
        #expect(heap.popDue(now: 5) == nil)
        #expect(heap.popDue(now: 10)?.payload == "a")
        #expect(heap.popDue(now: 19) == nil)
        #expect(heap.popDue(now: 25)?.payload == "b")
        #expect(heap.count == 1)
    }

    @Test func expiresAtTheDeadlineOnTheLoopClock() {
        let loop = EmbeddedEventLoop()
        let timeouts = SessionTimeouts(eventLoop: loop)
        var fired: [SessionTimeouts.Token] = []
        timeouts.onExpire = { fired.append($0) }
        timeouts.arm(.init(serial: 1, generation: 1), after: .seconds(30))
        timeouts.arm(.init(serial: 2, generation: 1), after: .seconds(5))
        loop.advanceTime(by: .seconds(4))
        #expect(fired.isEmpty)
        loop.advanceTime(by: .seconds(1))
        #expect(fired == [.init(serial: 2, generation: 1)])
        loop.advanceTime(by: .seconds(24))
        #expect(fired.count == 1)
        loop.advanceTime(by: .seconds(1))
        #expect(fired == [.init(serial: 2, generation: 1), .init(serial: 1, generation: 1)])
        #expect(timeouts.pendingCount == 0)
    }

    @Test func anEarlierDeadlineArmedLaterStillFiresFirst() {
        let loop = EmbeddedEventLoop()
        let timeouts = SessionTimeouts(eventLoop: loop)
        var fired: [Int] = []
        timeouts.onExpire = { fired.append($0.serial) }
        timeouts.arm(.init(serial: 1, generation: 1), after: .seconds(30))
        loop.advanceTime(by: .seconds(1))
        timeouts.arm(.init(serial: 2, generation: 1), after: .milliseconds(500))
        loop.advanceTime(by: .milliseconds(500))
        #expect(fired == [2])
        loop.advanceTime(by: .seconds(29))
        #expect(fired == [2, 1])
    }

    @Test func aTimeoutArmedWhileExpiringIsServed() {
        let loop = EmbeddedEventLoop()
        let timeouts = SessionTimeouts(eventLoop: loop)
        var fired: [SessionTimeouts.Token] = []
        timeouts.onExpire = { token in
            fired.append(token)
            if token.generation == 1 { timeouts.arm(.init(serial: token.serial, generation: 2), after: .seconds(2)) }
        }
        timeouts.arm(.init(serial: 7, generation: 1), after: .seconds(1))
        loop.advanceTime(by: .seconds(1))
        loop.advanceTime(by: .seconds(2))
        #expect(fired == [.init(serial: 7, generation: 1), .init(serial: 7, generation: 2)])
    }

    @Test func deadlinesRoundUpToTheTickNeverDown() {
        let loop = EmbeddedEventLoop()
        let timeouts = SessionTimeouts(eventLoop: loop)
        var fired: [Int] = []
        timeouts.onExpire = { fired.append($0.serial) }
        timeouts.arm(.init(serial: 1, generation: 1), after: .milliseconds(10))
        loop.advanceTime(by: .milliseconds(5))
        timeouts.arm(.init(serial: 2, generation: 1), after: .milliseconds(20))
        loop.advanceTime(by: .milliseconds(40))  // t = 45 ms: both deadlines passed, the tick has not
        #expect(fired.isEmpty)
        loop.advanceTime(by: .milliseconds(5))  // t = 50 ms: one wake-up serves both
        #expect(fired.sorted() == [1, 2])
    }

    @Test func cancelAllDropsEverything() {
        let loop = EmbeddedEventLoop()
        let timeouts = SessionTimeouts(eventLoop: loop)
        var fired = 0
        timeouts.onExpire = { _ in fired += 1 }
        for serial in 0..<100 { timeouts.arm(.init(serial: serial, generation: 1), after: .seconds(Int64(serial % 7))) }
        timeouts.cancelAll()
        loop.advanceTime(by: .seconds(10))
        #expect(fired == 0)
        #expect(timeouts.pendingCount == 0)
    }
}
