import Testing

@testable import LoadResults

/// When were lost messages sent: per-interval event tables, checked against `MessageLedger`'s count.
@Suite struct MessageLossClockTests {
    /// One interval's events: (sender, sequence) sent and received.
    struct Batch {
        var sent: [(UInt32, UInt32)] = []
        var received: [(UInt32, UInt32)] = []

        var events: MessageEvents {
            var events = MessageEvents()
            events.sent = sent.map { MessageEvents.Sent(sender: UInt64($0.0), sequence: $0.1) }
            events.received = received.map { MessageEvents.Received(sender: UInt64($0.0), sequence: $0.1, receiver: 99) }
            return events
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var batches: [Batch]
        /// Lost messages per interval index.
        var expected: [Int: UInt64]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "everything received",
            batches: [Batch(sent: [(1, 1), (1, 2)], received: [(1, 1)]), Batch(sent: [(1, 3)], received: [(1, 2), (1, 3)])],
            expected: [:]),
        Case(
            name: "a lost message counts in the interval it was sent in",
            batches: [Batch(sent: [(1, 1), (1, 2)], received: [(1, 1)]), Batch(sent: [(1, 3)], received: [(1, 3)]), Batch()],
            expected: [0: 1]),
        Case(
            name: "losses past the horizon keep their interval",
            batches: [
                Batch(sent: [(1, 1), (2, 1)]), Batch(sent: [(1, 2)], received: [(1, 2)]), Batch(), Batch(), Batch(),
                Batch(sent: [(1, 3)]), Batch(received: [(1, 3)]), Batch(), Batch(),
            ],
            expected: [0: 2]),
        Case(
            name: "a late delivery past the horizon is not lost",
            batches: [Batch(sent: [(1, 1), (1, 2)], received: [(1, 2)]), Batch(), Batch(), Batch(), Batch(received: [(1, 1)])],
            expected: [:]),
        Case(
            name: "a message received before its send was recorded (another loop) is not lost",
            batches: [Batch(received: [(3, 1)]), Batch(sent: [(3, 1), (3, 2)]), Batch(received: [(3, 2)])],
            expected: [:]),
        Case(
            name: "duplicates do not hide a loss",
            batches: [Batch(sent: [(1, 1), (1, 2)], received: [(1, 1), (1, 1)]), Batch(), Batch(), Batch(received: [(1, 1)])],
            expected: [0: 1]),
        Case(
            name: "several senders and intervals",
            batches: [
                Batch(sent: [(1, 1), (2, 1)], received: [(2, 1)]), Batch(sent: [(1, 2), (2, 2), (2, 3)], received: [(1, 2), (2, 3)]),
                Batch(sent: [(1, 3)]), Batch(),
            ],
            expected: [0: 1, 1: 1, 2: 1]),
    ]

    @Test(arguments: cases)
    func attributesLossesToTheSendInterval(_ testCase: Case) {
        // Horizon 12 s with 5-s intervals: marks settle two intervals after they end.
        var clock = MessageLossClock(horizon: 12)
        var ledger = MessageLedger()
        for (index, batch) in testCase.batches.enumerated() {
            clock.record(batch.events, start: Double(index) * 5, end: Double(index + 1) * 5)
            ledger.apply(batch.events)
        }
        let buckets = clock.finish()
        let expected = testCase.expected.sorted { $0.key < $1.key }.map {
            MessageLossBucket(start: Double($0.key) * 5, end: Double($0.key + 1) * 5, lost: $0.value)
        }
        #expect(buckets == expected)
        #expect(buckets.reduce(0) { $0 + $1.lost } == ledger.finish().lost)
    }

    /// A long run with a steady trickle of losses: the clock's marks stay within the horizon.
    @Test func longRunMatchesTheLedger() {
        var clock = MessageLossClock(horizon: 30)
        var ledger = MessageLedger()
        var sequence: [UInt32: UInt32] = [:]
        for index in 0..<400 {
            var batch = MessageEvents()
            for sender in UInt32(0)..<50 {
                sequence[sender, default: 0] += 1
                let number = sequence[sender]!
                batch.sent.append(.init(sender: UInt64(sender), sequence: number))
                // Every 97th message of a sender is lost, the rest arrive at once.
                if number % 97 != 0 { batch.received.append(.init(sender: UInt64(sender), sequence: number, receiver: sender + 1)) }
            }
            clock.record(batch, start: Double(index) * 5, end: Double(index + 1) * 5)
            ledger.apply(batch)
        }
        let buckets = clock.finish()
        #expect(buckets.reduce(0) { $0 + $1.lost } == ledger.finish().lost)
        #expect(buckets.map(\.start) == [96, 193, 290, 387].map { Double($0) * 5 })
        #expect(buckets.allSatisfy { $0.lost == 50 })
    }
}
